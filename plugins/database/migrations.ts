// The schema: the SQL files of migrations/, applied in order, each once.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Db } from './types.js'

/** What the migrations need of a database: the service's Db, or the new embedded one in its first-start process. */
export type MigrationTarget = Pick<Db, 'query' | 'transaction' | 'withAdvisoryLock'>

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url))

/**
 * Applies the migrations not yet recorded, in file-name order, each in its own transaction.
 * The advisory lock lets several instances start at once against one server.
 */
export async function migrate (db: MigrationTarget, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+-[\w-]+\.sql$/.test(f)).sort()
  return await db.withAdvisoryLock('schema_migrations', async () => {
    await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const { rows } = await db.query<{ id: string }>('SELECT id FROM schema_migrations')
    const applied = new Set(rows.map((r) => r.id))
    const added: string[] = []
    for (const file of files) {
      if (applied.has(file)) continue
      const script = await readFile(path.join(dir, file), 'utf8')
      await db.transaction(async (tx) => {
        await tx.exec(script)
        await tx.query('INSERT INTO schema_migrations (id) VALUES ($1)', [file])
      })
      added.push(file)
    }
    return added
  })
}
