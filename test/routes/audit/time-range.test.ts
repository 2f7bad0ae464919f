// GET /audit's `from` and `to` on both databases: every instant from 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999Z is taken (the edges included), anything outside is a 400 naming the
// parameter, never a 500: year 0000 and offsets that carry a date past either edge.
import t from 'tap'
import { adminAuth, buildTestApp, testDatabases } from '../../helper.js'

const inside = [
  ['from=0001-01-01', 1], ['to=9999-12-31', 1], ['from=0001-01-01T00:00:00Z', 1], ['to=9999-12-31T23:59:59.999Z', 1],
  ['from=0001-01-01T14:00:00%2B14:00', 1], ['to=9999-12-31T09:59:59-14:00', 1], ['from=0001-01-01&to=9999-12-31', 1],
  ['from=1969-12-31T23:59:59Z', 1], ['to=1970-01-01', 0]
] as const
const outside = [
  'from=0000-01-01', 'to=0000-01-01', 'from=0000-12-31T23:59:59.999Z', 'to=0001-01-01T00:00:00%2B00:01',
  'from=0001-01-01T13:59:59%2B14:00', 'to=9999-12-31T10:00:00-14:00', 'from=9999-12-31T23:59:59-00:01'
]

for (const database of testDatabases) {
  t.test(`the audit trail's time range on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const event = { actor: 'ann', serviceAccount: null, address: '192.0.2.1', requestId: 'r-1', action: 'user.update', target: 'bob' }
    await app.audit.repository.insert([{ ...event, at: Date.parse('2026-03-01T00:00:00Z'), outcome: 'success', status: 200, durationMs: 1, details: null }])
    for (const [query, total] of inside) {
      const response = await app.inject({ url: `/audit?${query}&equals=user.update`, headers: { authorization: adminAuth } })
      t.equal(response.statusCode, 200, `${query}: 200`)
      t.equal(response.json<{ total: number }>().total, total, `${query}: ${total} event`)
    }
    for (const query of outside) {
      const response = await app.inject({ url: `/audit?${query}`, headers: { authorization: adminAuth } })
      const field = query.slice(0, query.indexOf('='))
      t.equal(response.statusCode, 400, `${query}: 400`)
      t.match(response.json(), { code: 'INVALID_AUDIT_TIME_RANGE', message: new RegExp(`^querystring/${field} must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z`) }, `${query}: names ${field}`)
    }
  })
}
