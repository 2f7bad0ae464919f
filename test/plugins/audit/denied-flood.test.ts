// A flood without credentials grows the audit trail by a bounded amount per window, whatever it
// sends: each denied request's event is small (the target cut, an actor only when some user could
// have the name, the service's own request id), and past a few per address and window they are
// counted in one event per address. On both databases.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { basic, buildTestApp, captureLogs, createUser, testDatabases, type TestApp } from '../../helper.js'
import { DENIED_PATH_MAX } from '../../../lib/audit/denied.js'
import { LOG_URL_MAX } from '../../../plugins/core/server-options.js'
import { until } from '../../helpers/until.js'

t.setTimeout(300_000)

interface Row { action: string, actor: string | null, service_account: string | null, address: string, request_id: string, target: string, status: number, details: Record<string, number> | null, bytes: number }

async function rows (app: TestApp): Promise<Row[]> {
  app.audit.endDeniedWindow()
  await app.audit.flush()
  const { rows } = await app.db.query<Row>(`SELECT action, actor, service_account, address, request_id, target, status, details,
    octet_length(row_to_json(e)::text) AS bytes FROM audit_events e ORDER BY id`)
  return rows
}

const longName = (): string => `admin ${randomBytes(500).toString('hex')}`
// The window never ends on its own during a test: each test ends it.
const ONE_WINDOW = { AUDIT_DENIED_WINDOW_MS: '3600000' }

for (const database of testDatabases) {
  t.test(`a flood of denied requests from one address on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database, env: ONE_WINDOW })
    const N = 120
    for (let i = 0; i < N; i++) {
      const response = await app.inject({
        url: `/studio/component-groups/${randomBytes(500).toString('hex')}?token=secret-${i}`,
        headers: { authorization: basic(longName(), 'wrong-password'), 'x-request-id': `flood-${i}` }
      })
      if (response.statusCode !== 401) throw new Error(`expected 401, got ${response.statusCode}`)
    }
    const stored = await rows(app)
    const denied = stored.filter((r) => r.action === 'request.denied')
    const counts = stored.filter((r) => r.action === 'request.denied.suppressed')
    t.equal(denied.length, 10, 'the first AUDIT_DENIED_PER_ADDRESS (10) recorded')
    t.equal(counts.length, 1, 'the rest counted in one event')
    t.match(counts[0], { address: '127.0.0.1', target: '127.0.0.1', status: 0, actor: null, details: { suppressed: N - 10, addresses: 1 } })
    t.equal(stored.length, 11, `${N} requests, 11 rows`)
    for (const row of denied) {
      t.ok(row.target.length <= 'GET '.length + DENIED_PATH_MAX + 1, `target cut (${row.target.length} characters)`)
      t.notOk(row.target.includes('secret'), 'no query string')
      t.equal(row.actor, null, 'no user can have the name sent: no actor')
      t.notMatch(row.request_id, /^flood-/, 'the service\'s own request id, not the client\'s')
      t.ok(row.bytes < 600, `a small row (${row.bytes} bytes as JSON)`)
    }
    t.equal(app.audit.state().suppressed, N - 10)
  })

  t.test(`a flood of denied requests from many addresses on ${database}: bounded in total`, async (t) => {
    const app = await buildTestApp(t, { database, env: { ...ONE_WINDOW, AUDIT_DENIED_MAX: '20' } })
    const N = 200
    for (let i = 0; i < N; i++) {
      const remoteAddress = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
      const response = await app.inject({ url: `/users/${randomBytes(100).toString('hex')}`, remoteAddress, headers: { authorization: basic(longName(), 'x') } })
      if (response.statusCode !== 401) throw new Error(`expected 401, got ${response.statusCode}`)
    }
    const stored = await rows(app)
    const denied = stored.filter((r) => r.action === 'request.denied')
    const counts = stored.filter((r) => r.action === 'request.denied.suppressed')
    t.equal(denied.length, 20, 'AUDIT_DENIED_MAX recorded, all addresses together')
    t.equal(counts.length, 21, 'one count each for AUDIT_DENIED_MAX addresses, one for the others')
    t.ok(stored.length <= 2 * 20 + 1, `${N} requests from ${N} addresses: ${stored.length} rows`)
    t.match(counts.at(-1), { address: '', target: '(other addresses)', details: { addresses: N - 40 } })
    t.equal(counts.reduce((sum, r) => sum + (r.details?.suppressed ?? 0), 0), N - 20, 'every request not recorded counted')
  })

  t.test(`the actor of a denied request on ${database}: only a possible username`, async (t) => {
    const app = await buildTestApp(t, { database, env: ONE_WINDOW })
    await createUser(app, { username: 'ann', password: 'ann-password-1', roles: [] })
    const ask = async (authorization: string): Promise<number> => (await app.inject({ url: '/users', headers: { authorization } })).statusCode
    t.equal(await ask(basic('ann', 'wrong-password')), 401)
    t.equal(await ask(basic('admin ', 'wrong-password')), 401)
    t.equal(await ask(basic('ad\u202emin', 'wrong-password')), 401)
    t.equal(await ask(basic('x'.repeat(65), 'wrong-password')), 401)
    t.equal(await ask(basic('ann', 'ann-password-1')), 403)
    const denied = (await rows(app)).filter((r) => r.action === 'request.denied')
    t.same(denied.map((r) => [r.status, r.actor]), [[401, 'ann'], [401, null], [401, null], [401, null], [403, 'ann']])
  })

  t.test(`failed logins and token requests on ${database}: small, and limited as denied requests are`, async (t) => {
    const app = await buildTestApp(t, { database, env: ONE_WINDOW })
    for (let i = 0; i < 15; i++) {
      await app.inject({ method: 'POST', url: '/login', payload: { user: { username: `admin ${i}`, password: 'wrong-password' } } })
      await app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: randomBytes(2000).toString('hex'), client_secret: 'x' } })
    }
    const stored = await rows(app)
    const failures = stored.filter((r) => r.action === 'login' || r.action === 'oauth.token')
    t.equal(failures.length, 10, '10 of 30 recorded')
    t.match(stored.filter((r) => r.action === 'request.denied.suppressed'), [{ details: { suppressed: 20 } }])
    for (const row of failures) {
      t.equal(row.actor, null, `${row.action}: no actor for a name no user can have`)
      t.ok(row.target.length <= 129 && (row.service_account ?? '').length <= 129, `${row.action}: target and client id cut`)
    }
  })

  t.test(`the window ends on its own on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database, env: { AUDIT_DENIED_WINDOW_MS: '200', AUDIT_DENIED_PER_ADDRESS: '2' } })
    for (let i = 0; i < 5; i++) await app.inject({ url: '/users' })
    let counted: Array<{ details: { suppressed: number } }> = []
    await until(async () => {
      await app.audit.flush()
      counted = (await app.db.query<{ details: { suppressed: number } }>("SELECT details FROM audit_events WHERE action = 'request.denied.suppressed'")).rows
      return counted.length > 0
    }, 'the window\'s count written', 60_000)
    t.match(counted, [{ details: { suppressed: 3 } }], 'the count of the window, written without a call')
  })
}

t.test('the log lines of denied requests are bounded too: the URL and Host cut', async (t) => {
  const logs = captureLogs()
  const app = await buildTestApp(t, { database: 'any', env: { LOG_LEVEL: 'info' }, logStream: logs })
  const path = `/studio/component-groups/${randomBytes(1000).toString('hex')}`
  const answer = await app.inject({ url: `${path}?token=secret`, headers: { authorization: basic(longName(), 'x'), host: `h${'o'.repeat(4000)}.example` } })
  t.equal(answer.statusCode, 401)
  const lines = logs.lines.map((line) => JSON.parse(line) as { req?: { url?: string, host?: string } })
  const requestLines = lines.filter((line) => line.req !== undefined)
  t.ok(requestLines.length > 0, 'the request was logged')
  for (const line of requestLines) {
    t.equal(line.req?.url, `${path.slice(0, LOG_URL_MAX)}…`, 'the URL cut, without its token')
    t.ok((line.req?.host ?? '').length <= LOG_URL_MAX + 1, 'the Host cut')
  }
  t.ok(logs.lines.every((line) => line.length < 2048), `no line past 2 KiB (longest ${Math.max(...logs.lines.map((l) => l.length))})`)
})
