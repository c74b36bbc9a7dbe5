/** The `processes` module of the file store without its lock: no transaction across processes. */
import { racerStore } from './file-store-options.js'

export const createStore = racerStore({ lock: false })
