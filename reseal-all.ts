// Sealing every stored secret again under the current key, after SECRET_KEY changed:
// what `npm run reseal` runs (reseal.ts). Reading a secret does it too, one row at a time.
import type { Queryable } from './plugins/database/index.js'
import { SecretKeyMismatch } from './lib/secrets/secret-box.js'
import type { SecretSealer } from './plugins/core/secrets.js'

export interface ResealCounts {
  /** Rows sealed again under the current key. */
  resealed: number
  /** Rows the current key sealed already (or changed by someone else meanwhile). */
  current: number
  /** Rows no configured key opens: each names its table and row. */
  unreadable: string[]
}

interface SealedTable {
  table: string
  column: string
  /** The row's key columns, in order: the keyset the batches walk. */
  keys: string[]
  context: (row: Record<string, string>) => string
}

const TABLES: SealedTable[] = [
  { table: 'orchestrator_adapters', column: 'password_sealed', keys: ['id'], context: (row) => row.id ?? '' },
  {
    table: 'git_credentials',
    column: 'token_sealed',
    keys: ['username', 'provider'],
    // As plugins/git/credentials-store.ts binds each token to its user and provider.
    context: (row) => `git-credential:${row.provider ?? ''}:${row.username ?? ''}`
  }
]

/**
 * Seals every stored secret a previous key sealed under the current key, `batchSize` rows at a
 * time; each UPDATE is guarded by the old value, so instances re-sealing on read meanwhile, or a
 * secret set again meanwhile, are left as they are.
 */
export async function resealAll (db: Queryable, sealer: SecretSealer, batchSize = 500): Promise<ResealCounts> {
  const counts: ResealCounts = { resealed: 0, current: 0, unreadable: [] }
  for (const { table, column, keys, context } of TABLES) {
    const keyList = keys.join(', ')
    const placeholders = keys.map((_, i) => `$${i + 1}`).join(', ')
    let after: string[] | undefined
    for (;;) {
      const { rows } = await db.query<Record<string, string>>(
        `SELECT ${keyList}, ${column} AS sealed FROM ${table} ${after === undefined ? '' : `WHERE (${keyList}) > (${placeholders})`} ` +
        `ORDER BY ${keyList} LIMIT ${batchSize}`, after)
      for (const row of rows) {
        const sealed = row.sealed ?? ''
        let resealed: string | undefined
        try {
          resealed = (await sealer.unseal(sealed, context(row))).resealed
        } catch (err) {
          if (!(err instanceof SecretKeyMismatch)) throw err
          counts.unreadable.push(`${table} ${keys.map((key) => row[key]).join('/')}`)
          continue
        }
        if (resealed === undefined) {
          counts.current++
          continue
        }
        const where = keys.map((key, i) => `${key} = $${i + 1}`).join(' AND ')
        const { rowCount } = await db.query(`UPDATE ${table} SET ${column} = $${keys.length + 2} WHERE ${where} AND ${column} = $${keys.length + 1}`,
          [...keys.map((key) => row[key]), sealed, resealed])
        if (rowCount === 1) counts.resealed++
        else counts.current++
      }
      const last = rows.at(-1)
      if (last === undefined || rows.length < batchSize) break
      after = keys.map((key) => last[key] ?? '')
    }
  }
  return counts
}
