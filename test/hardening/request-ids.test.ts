// X-Request-Id is used as the request's id only from a trusted proxy (TRUST_PROXY) and when short
// and safe; anything else (oversized, spaces, quotes, control or non-ASCII characters, or any id
// from a client that is no trusted proxy) is ignored and an id is made instead.
import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, captureLogs } from '../helper.js'
import { REQUEST_ID_PATTERN } from '../../lib/http/ids.js'
import { injectWithin } from './hostile.js'

const safeChars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-'.split('')
const safe = fc.string({ unit: fc.constantFrom(...safeChars), minLength: 1, maxLength: 64 })
const unsafe = fc.oneof(
  fc.string({ unit: fc.constantFrom(...safeChars), minLength: 65, maxLength: 15_000 }),
  fc.tuple(safe, fc.constantFrom(' ', '"', '\\', '{', '<', '\t', 'é', '\u202e', '%0a', '/', '='), safe).map(([a, c, b]) => a + c + b)
)

t.test('request ids in the logs, behind a trusted proxy', async (t) => {
  const logs = captureLogs()
  const app = await buildTestApp(t, { database: 'any', env: { LOG_LEVEL: 'info', TRUST_PROXY: 'loopback' }, logStream: logs })
  const idsOf = (marker: string): string[] => logs.lines
    .map((line) => JSON.parse(line) as { reqId?: string, req?: { url?: string } })
    .filter((entry) => entry.req?.url?.includes(marker) === true)
    .map((entry) => entry.reqId ?? '')

  let n = 0
  await fc.assert(fc.asyncProperty(fc.oneof(safe.map((id) => ({ id, kept: true })), unsafe.map((id) => ({ id, kept: false }))), async ({ id, kept }) => {
    const marker = `probe-${++n}`
    const response = await injectWithin(app, { url: `/studio/component-groups?contains=${marker}`, headers: { authorization: adminAuth, 'x-request-id': id } })
    const ids = idsOf(marker)
    const ok = response.statusCode === 200 && ids.length > 0 &&
      ids.every((logged) => REQUEST_ID_PATTERN.test(logged) && (kept ? logged === id : logged !== id))
    if (!ok) t.comment(`${JSON.stringify(id).slice(0, 80)} (${kept ? 'kept' : 'replaced'}): logged ${JSON.stringify(ids).slice(0, 120)}`)
    return ok
  }), { numRuns: 60 })
  t.ok(logs.lines.every((line) => line.length < 4096), 'no log line carries an oversized id')
})

t.test('without a trusted proxy a client never chooses its request id (logs and audit trail)', async (t) => {
  for (const env of [{}, { TRUST_PROXY: '10.0.0.0/8' }]) {
    const logs = captureLogs()
    const app = await buildTestApp(t, { database: 'any', env: { LOG_LEVEL: 'info', ...env }, logStream: logs })
    const chosen = 'client-chosen-id-1'
    const answer = await app.inject({ url: '/users', headers: { 'x-request-id': chosen } })
    t.equal(answer.statusCode, 401)
    const ids = logs.lines.map((line) => (JSON.parse(line) as { reqId?: string }).reqId).filter((id) => id !== undefined)
    t.ok(ids.length > 0, 'the request was logged')
    t.notOk(ids.includes(chosen), `not in the logs (TRUST_PROXY ${JSON.stringify(env)})`)
    await app.audit.flush()
    const { rows } = await app.db.query<{ request_id: string }>("SELECT request_id FROM audit_events WHERE action = 'request.denied'")
    t.equal(rows.length, 1)
    t.not(rows[0]?.request_id, chosen, 'nor in the audit trail')
    t.ok(ids.includes(rows[0]?.request_id), 'the trail has the id the logs have')
  }
})
