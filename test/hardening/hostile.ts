// What every hostile-input test checks after its requests: the service still answers (readiness
// and an ordinary read), and no row of any table changed.
import type { Test } from 'tap'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { adminAuth, type TestApp } from '../helper.js'

/** A digest of every row of every table of the service, to prove nothing changed. */
export async function databaseDigest (app: TestApp): Promise<string> {
  const { rows: tables } = await app.db.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1")
  const parts: string[] = []
  for (const { name } of tables) {
    const { rows } = await app.db.query<{ d: string | null }>(
      `SELECT md5(string_agg(row_to_json(x)::text, ',' ORDER BY row_to_json(x)::text)) AS d FROM "${name}" x`)
    parts.push(`${name}:${rows[0]?.d ?? 'empty'}`)
  }
  return parts.join(' ')
}

/** How long one request may take before the test calls it a hang (a deadline, not a speed target). */
export const HANG_DEADLINE_MS = 60_000

/** `app.inject` under a deadline: a request that never answers fails the test instead of stalling it. */
export async function injectWithin (app: TestApp, options: InjectOptions): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`no answer within ${HANG_DEADLINE_MS} ms`)) }, HANG_DEADLINE_MS)
  })
  try {
    return await Promise.race([app.inject(options), deadline])
  } finally {
    clearTimeout(timer)
  }
}

/** Readiness and an ordinary authenticated read still answer 200. */
export async function assertStillServing (t: Test, app: TestApp): Promise<void> {
  t.equal((await injectWithin(app, { url: '/ready' })).statusCode, 200, '/ready answers 200')
  const read = await injectWithin(app, { url: '/studio/component-groups', headers: { authorization: adminAuth } })
  t.equal(read.statusCode, 200, 'an ordinary read answers 200')
}
