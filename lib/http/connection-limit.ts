// How many client connections the process may hold: below its file-descriptor limit, with room
// left for the descriptors it needs besides (database, Git and orchestrator sockets, files).

/** The descriptor limit assumed when the process cannot read its own (not Linux). */
export const ASSUMED_DESCRIPTOR_LIMIT = 1024

/** Descriptors of the process itself, whatever its settings: standard streams, the event loop, worker threads, files. */
export const BASE_DESCRIPTORS = 128

/**
 * The soft limit on open files from the text of /proc/self/limits ("Max open files  1024  4096
 * files"): a number, Infinity for "unlimited", undefined when the line is missing or unreadable.
 */
export function openFilesLimit (limits: string): number | undefined {
  const match = /^Max open files\s+(\S+)\s+\S+/m.exec(limits)
  if (match === null) return undefined
  const soft = match[1] ?? ''
  if (soft === 'unlimited') return Infinity
  return /^\d+$/.test(soft) ? Number(soft) : undefined
}

export interface DescriptorNeeds {
  /** Connections of the database pool (EMBEDDED_DATABASE_DESCRIPTORS without a server). */
  databasePool: number
  /** Git operations at once (a socket and a file each, at most). */
  gitOperations: number
  /** Connections of one orchestrator adapter's pool. */
  adapterPool: number
}

/**
 * Descriptors of the embedded database (it keeps the files of the relations it has read open: 210
 * at the first start, idle), counted in place of a server's pool.
 */
export const EMBEDDED_DATABASE_DESCRIPTORS = 256

/** Orchestrator adapters whose pools are counted as open at once. */
export const ADAPTER_POOLS_RESERVED = 4

/** The descriptors kept out of the connection limit: the process's own, the database pool, Git, four adapters' pools. */
export function reservedDescriptors (needs: DescriptorNeeds): number {
  return BASE_DESCRIPTORS + needs.databasePool + 2 * needs.gitOperations + ADAPTER_POOLS_RESERVED * needs.adapterPool
}

export interface ConnectionLimit {
  /** The most client connections held at once (Infinity: no limit). */
  connections: number
  /** The descriptor limit it was derived from, and whether that was read or assumed. */
  descriptors: number
  descriptorsRead: boolean
  /** Why the limit is lower than the configured one or than what the reserve leaves, if it is. */
  warning?: string
}

/**
 * The connection limit: the descriptors left after the reserve (at least a quarter of the limit,
 * so that a low limit still serves), never above `configured` when that is set (> 0).
 */
export function connectionLimit (descriptors: number | undefined, reserve: number, configured: number): ConnectionLimit {
  const descriptorsRead = descriptors !== undefined
  const limit = descriptors ?? ASSUMED_DESCRIPTOR_LIMIT
  if (limit === Infinity) return { connections: configured > 0 ? configured : Infinity, descriptors: limit, descriptorsRead }
  const left = limit - reserve
  const quarter = Math.max(1, Math.floor(limit / 4))
  const derived = Math.max(left, quarter)
  let warning: string | undefined
  if (left < quarter) {
    warning = `the file-descriptor limit (${limit}) leaves fewer than ${quarter} connections after the ${reserve} reserved: ` +
      `${quarter} allowed; raise the limit (ulimit -n)`
  }
  if (configured > derived) {
    warning = `HTTP_MAX_CONNECTIONS (${configured}) is above what the file-descriptor limit (${limit}) allows ` +
      `with ${reserve} descriptors reserved: ${derived} allowed`
  }
  return { connections: configured > 0 ? Math.min(configured, derived) : derived, descriptors: limit, descriptorsRead, ...(warning === undefined ? {} : { warning }) }
}
