import t from 'tap'
import { adminAuth, basic, buildTestApp, createUser } from '../../helper.js'
import { until } from '../../helpers/until.js'

const route = '/configuration_manager/ismaintenance'

t.test('GET /metrics: Prometheus text with requests by route and status, and the database pool', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  await app.inject({ url: route, headers: { authorization: adminAuth } })
  await app.inject({ url: route })
  await app.inject({ url: '/users/admin', headers: { authorization: adminAuth } })
  await app.inject({ url: '/no/such/route' })
  const response = await app.inject({ url: '/metrics' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^text\/plain/)
  t.match(response.body, /http_request_duration_seconds_count\{method="GET",route="\/configuration_manager\/ismaintenance",status_code="200"\} 1/)
  t.match(response.body, /http_request_duration_seconds_count\{method="GET",route="\/configuration_manager\/ismaintenance",status_code="401"\} 1/)
  t.match(response.body, /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/users\/:username",status_code="200"\} \d+/,
    'the route as registered, parameters unexpanded')
  t.notMatch(response.body, /no\/such\/route|route="\/metrics"/, 'neither unknown URLs nor the scrape itself become series')
  t.match(response.body, /db_pool_connections\{state="total"\} \d+/)
  t.match(response.body, /process_cpu_seconds_total/)

  const second = await buildTestApp(t, { database: 'any' })
  const other = await second.inject({ url: '/metrics' })
  t.notMatch(other.body, /status_code="401"/, 'each instance has its own series')
})

t.test('METRICS_AUTH=true puts /metrics behind admin credentials', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { METRICS_AUTH: 'true' } })
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 401)
  const reader = await createUser(app, { username: 'reader' })
  t.equal((await app.inject({ url: '/metrics', headers: { authorization: reader } })).statusCode, 403)
  t.equal((await app.inject({ url: '/metrics', headers: { authorization: adminAuth } })).statusCode, 200)
})

t.test('failed logins are limited per address and username; successes are not slowed', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { LOGIN_FAILURES_MAX: '3', LOGIN_FAILURES_WINDOW_MS: '60000' } })
  const ann = await createUser(app, { username: 'ann' })
  t.equal((await app.inject({ url: route, headers: { authorization: ann } })).statusCode, 200, 'ann logs in first')

  // Guesses: a different wrong password each time (the same one retried is not counted again).
  const guess = (i: number): string => basic('ann', `not-her-password-${i}`)
  for (let i = 0; i < 3; i++) {
    t.equal((await app.inject({ url: route, headers: { authorization: guess(i) } })).statusCode, 401, `failure ${i + 1}`)
  }
  const limited = await app.inject({ url: route, headers: { authorization: guess(3) } })
  t.equal(limited.statusCode, 429)
  t.match(limited.json(), { statusCode: 429, error: 'Too Many Requests' })
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After says when to come back')

  t.equal((await app.inject({ url: route, headers: { authorization: ann } })).statusCode, 200,
    'a caller whose credentials were already verified is never slowed')
  t.equal((await app.inject({ url: route, headers: { authorization: basic('ann', 'not-her-password') }, remoteAddress: '10.9.9.9' })).statusCode, 401,
    'another address is counted apart')
  t.equal((await app.inject({ url: route, headers: { authorization: basic('bob', 'x-password') } })).statusCode, 401,
    'another username is counted apart')
  t.equal((await app.inject({ url: route, headers: { authorization: adminAuth } })).statusCode, 200)
})

t.test('under pressure the service sheds load with 503 and Retry-After; liveness still answers', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { LOAD_SHEDDING_MAX_HEAP_BYTES: '1', LOAD_SHEDDING_RETRY_AFTER_S: '7' } })
  // The heap is sampled on a timer; wait for a sample above the (tiny) bound.
  let response = await app.inject({ url: route, headers: { authorization: adminAuth } })
  await until(async () => {
    if (response.statusCode !== 503) response = await app.inject({ url: route, headers: { authorization: adminAuth } })
    return response.statusCode === 503
  }, 'a request is shed', 10_000)
  t.equal(response.statusCode, 503)
  t.equal(response.headers['retry-after'], '7')
  t.match(response.json(), { statusCode: 503, error: 'Service Unavailable', code: 'SERVICE_OVERLOADED' })
  t.equal((await app.inject({ url: route, headers: { authorization: basic('admin', 'not-the-password') } })).statusCode, 503,
    'refused before any password check')
  t.equal((await app.inject({ url: '/health' })).statusCode, 200)
})

t.test('/metrics carries Git initialization durations and each orchestrator adapter pool', async (t) => {
  const { startGitServer } = await import('../../fixtures/git-server.js')
  const { startNsoServer } = await import('../../fixtures/nso-server.js')
  const gitServer = await startGitServer({ username: 'git-user', password: 'git-token' })
  t.teardown(async () => { await gitServer.close() })
  const nso = await startNsoServer()
  t.teardown(async () => { await nso.close() })
  await gitServer.createRepo('netops/metrics')
  const app = await buildTestApp(t, {
    database: 'any',
    env: { GIT_PROVIDERS: JSON.stringify({ Local: { url: gitServer.url, username: 'git-user', token: 'git-token' } }) }
  })
  const headers = { authorization: adminAuth }

  const init = await app.inject({
    method: 'POST', url: `/git/Local/repos/${encodeURIComponent('netops/metrics')}/branches/main/projects/p.json`, headers, payload: { project: { a: 1 } }
  })
  t.equal(init.statusCode, 200, init.body)
  const adapter = await app.inject({
    method: 'POST', url: '/orchestrator_manager/adapters', headers, payload: { id: 'nso1', baseUrl: nso.url, username: nso.username, password: nso.password }
  })
  t.equal(adapter.statusCode, 200, adapter.body)
  const query = await app.inject({
    method: 'POST', url: '/orchestrator_manager/restQuery/nso1', headers, payload: { params: { path: '/restconf/data/tailf-ncs:devices', accept: 'application/yang-data+json' } }
  })
  t.equal(query.statusCode, 200, query.body)

  const metrics = (await app.inject({ url: '/metrics' })).body
  t.match(metrics, /git_operation_duration_seconds_count\{provider="Local",operation="initialize_project",outcome="ok"\} 1/)
  // An open /metrics sums the pools: no adapter id in it (test/plugins/orchestrator/metrics.test.ts).
  t.match(metrics, /orchestrator_pool_connections\{state="connected"\} 1/)
  t.match(metrics, /orchestrator_pool_connections\{state="running"\} 0/)
})
