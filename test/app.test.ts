import t, { type Test } from 'tap'
import type { Logger } from 'pino'
import { buildApp } from '../app.js'
import { adminAuth, captureLogs, createTestDatabase, testConfig } from './helper.js'

interface Line { reqId?: string, msg?: string, level?: number, part?: string }

// The service as built for production, plus one route that reports on the logger Fastify hands a
// request: what every route, plugin and hook of the service logs through.
async function appWithProbe (t: Test, level: string) {
  const database = await createTestDatabase(t, 'any', { migrated: true })
  const logs = captureLogs()
  // The probes name their requests with X-Request-Id, which is taken from a trusted proxy only.
  const app = await buildApp(testConfig({ ...database.env, LOG_LEVEL: level, TRUST_PROXY: 'loopback' }), { logStream: logs })
  t.teardown(async () => { await app.close() })
  app.get('/log-probe', async (request) => {
    const log = request.log as Logger
    const part = log.child({ part: 'probe' })
    part.warn('from a part')
    log.setBindings({ extra: 'set' })
    log.flush()
    return { bindings: log.bindings(), partBindings: part.bindings(), level: log.level }
  })
  await app.ready()
  const lines = (): Line[] => logs.lines.map((l) => JSON.parse(l) as Line)
  return { app, lines }
}

t.test("a request's logger is pino's own child, bound to the request id", async (t) => {
  const { app, lines } = await appWithProbe(t, 'warn')
  const response = await app.inject({ url: '/log-probe', headers: { 'x-request-id': 'probe-1' } })
  t.equal(response.statusCode, 200)
  t.same(response.json(), {
    bindings: { reqId: 'probe-1', extra: 'set' },
    partBindings: { reqId: 'probe-1', part: 'probe' },
    level: 'warn'
  }, 'bindings(), setBindings(), flush() and child() of a pino logger')
  const written = lines().filter((l) => l.reqId !== undefined)
  t.equal(written.length, 1, 'at warn, of the request only the line the route wrote')
  t.match(written[0], { reqId: 'probe-1', part: 'probe', msg: 'from a part', level: 40 })

  const child = app.log.child({ component: 'x' }) as Logger
  t.same(child.bindings(), { component: 'x' }, "children of the root logger are pino's too")
})

t.test("at info every line of a request carries its request id, Fastify's own included", async (t) => {
  const { app, lines } = await appWithProbe(t, 'info')
  await app.inject({ url: '/configuration_manager/ismaintenance', headers: { authorization: adminAuth, 'x-request-id': 'req-a' } })
  await app.inject({ url: '/configuration_manager/ismaintenance', headers: { 'x-request-id': 'req-b' } })
  const byRequest = (id: string) => lines().filter((l) => l.reqId === id).map((l) => l.msg)
  t.same(byRequest('req-a'), ['incoming request', 'request completed'])
  t.same(byRequest('req-b'), ['incoming request', 'request refused', 'request completed'], 'a refused request too, the service\'s own line included')
  const before = lines().length
  await app.inject({ url: '/health' })
  const own = lines().slice(before)
  t.same(own.map((l) => l.msg), ['incoming request', 'request completed'])
  const id = own[0]?.reqId
  t.ok(typeof id === 'string' && id !== '' && id !== 'req-a' && id !== 'req-b', `a request without x-request-id gets an id of its own (${String(id)})`)
  t.equal(own[1]?.reqId, id, 'the same on both of its lines')
})
