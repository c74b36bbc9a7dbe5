import os from 'node:os'

/** The machine a run happened on, as the README table states it. */
export interface MachineInfo {
  nproc: number
  memoryGiB: number
  cpu: string
  node: string
  platform: string
  postgres: string | null
}

export function machineInfo(postgres: string | null): MachineInfo {
  return {
    nproc: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    postgres,
  }
}
