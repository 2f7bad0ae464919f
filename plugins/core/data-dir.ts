import fp from 'fastify-plugin'
import { chmod, lstat, mkdir, opendir, stat } from 'node:fs/promises'
import path from 'node:path'

/** Modes of everything under DATA_DIR: only the service's own user may read or write it. */
export const DATA_DIR_MODE = 0o700
export const DATA_FILE_MODE = 0o600

/**
 * Creates `dir` (0700) when missing and gives it and everything under it the service's modes:
 * directories 0700, files 0600 (symbolic links are left alone, not followed). Run on every start:
 * the embedded database's files, the Git cache and the secret key file hold password hashes,
 * tokens and keys.
 */
export async function secureDataDir (dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DATA_DIR_MODE })
  const root = path.resolve(dir)
  const pending = [root]
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    try {
      // DATA_DIR itself may be a link to where the data lives; links inside it are not followed.
      const info = current === root ? await stat(current) : await lstat(current)
      if (info.isSymbolicLink()) continue
      const mode = info.isDirectory() ? DATA_DIR_MODE : DATA_FILE_MODE
      if ((info.mode & 0o7777) !== mode) await chmod(current, mode)
      if (!info.isDirectory()) continue
      for await (const entry of await opendir(current)) {
        if (!entry.isSymbolicLink()) pending.push(path.join(current, entry.name))
      }
    } catch (err) {
      // A file the database removed meanwhile (a temporary one) needs no repair.
      if ((err as { code?: unknown }).code !== 'ENOENT' || current === root) throw err
    }
  }
}

export default fp(async (fastify) => {
  await secureDataDir(fastify.config.DATA_DIR)
}, { name: 'data-dir', dependencies: ['config'] })
