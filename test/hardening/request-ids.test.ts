// X-Request-Id is used as the request's id only when short and safe; anything else (oversized,
// spaces, quotes, control or non-ASCII characters) is ignored and an id is made instead.
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

t.test('request ids in the logs', async (t) => {
  const logs = captureLogs()
  const app = await buildTestApp(t, { database: 'any', env: { LOG_LEVEL: 'info' }, logStream: logs })
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
