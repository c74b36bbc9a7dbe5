import type { ConformanceCase } from '../case.js'
import { lockCases } from './lock-cases.js'
import { streamCases } from './stream-cases.js'
import { streamHttpCases } from './stream-http-cases.js'
import { streamUpsertCases } from './stream-upsert-cases.js'

/** TanStack AI's resumable streams (`stream.*`) and locks (`lock.*`) on the store. */
export const streamSectionCases: readonly ConformanceCase[] = [...streamCases, ...streamUpsertCases, ...streamHttpCases, ...lockCases]
