// The deployment's failed-login counts (migrations/015): lib/auth/shared-failure-counts.ts decides
// when to write; this says how. Every time is the database's, so instances' clocks do not matter.
import type { Queryable } from '../database/index.js'
import type { KeyChange, KeyCount } from '../../lib/auth/shared-failure-counts.js'

// Ended windows removed per sweep: a small batch, so that a sweep never holds up a login for long.
export const SWEEP_BATCH = 500

export interface LoginFailuresRepository {
  apply: (reserve: KeyChange[], giveBack: KeyChange[]) => Promise<KeyCount[]>
  /** Removes at most SWEEP_BATCH ended windows; how many it removed. */
  sweep: () => Promise<number>
}

export function loginFailuresRepository (db: Queryable, windowMs: number): LoginFailuresRepository {
  return {
    async apply (reserve, giveBack) {
      if (giveBack.length > 0) {
        await db.query(`UPDATE login_failures AS f SET failures = greatest(f.failures - c.n, 0)
          FROM unnest($1::text[], $2::int[]) AS c(key, n) WHERE f.key = c.key AND f.window_ends > now()`,
        [giveBack.map((change) => change.key), giveBack.map((change) => change.n)])
      }
      if (reserve.length === 0) return []
      // A window that ended starts again with these places; one still open adds them.
      const { rows } = await db.query<{ key: string, failures: number, seconds_left: number }>(
        `INSERT INTO login_failures AS f (key, failures, window_ends)
          SELECT c.key, c.n, now() + $3::int * interval '1 millisecond' FROM unnest($1::text[], $2::int[]) AS c(key, n)
        ON CONFLICT (key) DO UPDATE SET
          failures = CASE WHEN f.window_ends <= now() THEN EXCLUDED.failures ELSE f.failures + EXCLUDED.failures END,
          window_ends = CASE WHEN f.window_ends <= now() THEN EXCLUDED.window_ends ELSE f.window_ends END
        RETURNING key, failures, ceil(extract(epoch FROM window_ends - now()))::int AS seconds_left`,
        [reserve.map((change) => change.key), reserve.map((change) => change.n), windowMs])
      return rows.map((row) => ({ key: row.key, failures: row.failures, secondsLeft: row.seconds_left }))
    },

    async sweep () {
      const { rowCount } = await db.query(`DELETE FROM login_failures WHERE key IN
        (SELECT key FROM login_failures WHERE window_ends < now() ORDER BY window_ends LIMIT ${SWEEP_BATCH})`)
      return rowCount
    }
  }
}
