// The PostgreSQL server goes away under load and comes back; its backends get killed. The shared
// server keeps running: a TCP proxy between the service and it is what fails.
import t, { type Test } from 'tap'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { startTcpProxy } from '../fixtures/tcp-proxy.js'
import { adminAuth, buildTestApp, createTestDatabase, createUser, type TestApp } from '../helper.js'
import { until } from '../helpers/until.js'

const serverUrl = process.env.TEST_DATABASE_URL ?? ''
const skip = serverUrl === '' ? 'needs TEST_DATABASE_URL (a PostgreSQL server)' : false

const UNAVAILABLE = {
  statusCode: 503,
  error: 'Service Unavailable',
  message: 'The database is unavailable; try again shortly',
  code: 'DATABASE_UNAVAILABLE'
}

interface Answer { statusCode: number, body: string }

/** Requests that each need the database, from reading to writing. */
function probes (app: TestApp, viewer: string): Record<string, () => Promise<Answer>> {
  let n = 0
  return {
    'list users (cached admin credentials)': async () => await app.inject({ url: '/users', headers: { authorization: adminAuth } }),
    'create a user': async () => await app.inject({
      method: 'POST', url: '/users', headers: { authorization: adminAuth }, payload: { username: `probe-${n++}-${randomBytes(3).toString('hex')}`, password: 'probe-password' }
    }),
    'log in as a user not seen before': async () => await app.inject({ url: '/configuration_manager/ismaintenance', headers: { authorization: viewer } }),
    ready: async () => await app.inject({ url: '/ready' })
  }
}

/** Runs every probe until all answer 200 in one round, or `deadlineMs` passes; the failures seen. */
async function recover (run: Record<string, () => Promise<Answer>>, deadlineMs: number): Promise<{ recovered: boolean, failures: Answer[], elapsedMs: number }> {
  const started = Date.now()
  const failures: Answer[] = []
  const recovered = await until(async () => {
    const answers = await Promise.all(Object.values(run).map(async (probe) => await probe()))
    const failed = answers.filter((a) => a.statusCode !== 200)
    failures.push(...failed)
    return failed.length === 0
  }, 'every probe answers 200 in one round', deadlineMs).then(() => true, () => false)
  return { recovered, failures, elapsedMs: Date.now() - started }
}

async function backends (applicationName: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName])
    return rows.map((r) => r.pid)
  } finally {
    await client.end()
  }
}

/** The service on a fresh schema, reaching PostgreSQL through a proxy the test can cut. */
async function setUp (t: Test, env: Record<string, string> = {}) {
  const database = await createTestDatabase(t, 'postgres')
  const direct = new URL(database.env.DATABASE_URL ?? '')
  const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port === '' ? 5432 : direct.port) })
  t.teardown(proxy.close)
  const applicationName = `netauto_test_${randomBytes(6).toString('hex')}`
  const url = new URL(direct)
  url.port = String(proxy.port)
  url.searchParams.set('application_name', applicationName)
  const app = await buildTestApp(t, { database: { ...database, env: { ...database.env, ...env, DATABASE_URL: url.toString() } } })
  // Credentials are remembered once verified: the admin's are now, the viewer's are not.
  t.equal((await app.inject({ url: '/users', headers: { authorization: adminAuth } })).statusCode, 200)
  const viewer = await createUser(app, { username: 'viewer' })
  return { app, proxy, applicationName, run: probes(app, viewer) }
}

t.test('the database goes away mid-traffic and comes back', { skip }, async (t) => {
  const { app, proxy, run } = await setUp(t)
  t.ok(proxy.accepted > 0, 'the service reaches PostgreSQL through the proxy')

  // Traffic from four clients until told to stop, every answer kept.
  const answers: Answer[] = []
  let stop = false
  const traffic = Promise.all([0, 1, 2, 3].map(async () => {
    while (!stop) {
      answers.push(await app.inject({ url: '/users', headers: { authorization: adminAuth } }))
      // Pacing, not a wait for a condition: steady traffic rather than as many requests as the loop can make.
      await sleep(5)
    }
  }))
  await until(() => answers.length >= 20, 'twenty answers before the cut')
  await proxy.cut()
  const atCut = answers.length
  await until(() => answers.length >= atCut + 40, 'forty answers after the cut')
  stop = true
  await traffic

  const statuses = new Set(answers.map((a) => a.statusCode))
  t.same([...statuses].sort(), [200, 503], 'under load: answers before the cut, 503 after it, nothing else')
  t.ok(answers.filter((a) => a.statusCode === 503).every((a) => a.body === JSON.stringify(UNAVAILABLE)), 'every 503 in the one error shape')

  for (const [name, probe] of Object.entries(run)) {
    const answer = await probe()
    t.equal(answer.statusCode, 503, `while cut: ${name}`)
    t.same(JSON.parse(answer.body), UNAVAILABLE)
  }
  const health = await app.inject({ url: '/health' })
  t.equal(health.statusCode, 200, 'liveness does not depend on the database: the process stays up')

  await proxy.restore()
  const { recovered, elapsedMs } = await recover(run, 5000)
  t.ok(recovered, `every request succeeds again within 5 s of the database coming back (${elapsedMs} ms)`)
  t.same(JSON.parse((await run.ready?.())?.body ?? '{}'), { status: 'ready' })
})

t.test('backends terminated by the server are replaced', { skip }, async (t) => {
  const { proxy, applicationName, run } = await setUp(t)
  t.equal((await recover(run, 5000)).recovered, true, 'all well before')
  const before = await backends(applicationName)
  t.ok(before.length > 0, `the service's connections are identified by application_name (${before.length})`)

  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  t.teardown(async () => { await admin.end() })
  const { rows } = await admin.query<{ terminated: boolean }>(
    'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE application_name = $1', [applicationName])
  t.ok(rows.length > 0 && rows.every((r) => r.terminated), `terminated ${rows.length} backends`)

  const { recovered, failures, elapsedMs } = await recover(run, 5000)
  t.ok(recovered, `requests succeed again within 5 s (${elapsedMs} ms, ${failures.length} failed meanwhile)`)
  t.ok(failures.every((f) => f.body === JSON.stringify(UNAVAILABLE)), 'any failure meanwhile is a 503 in the one error shape')
  const after = await backends(applicationName)
  t.ok(after.length > 0 && after.every((pid) => !before.includes(pid)), 'served by new connections')
  t.ok(proxy.accepted > before.length, 'opened through the same address')
})

t.test('a database that stops answering (connections open, nothing comes back) gives 503s, not hung requests', { skip }, async (t) => {
  const { app, proxy, run } = await setUp(t, { DATABASE_QUERY_TIMEOUT_MS: '1000' })
  proxy.freeze()
  const started = Date.now()
  const answers = await Promise.all(Object.values(run).map(async (probe) => await probe()))
  const elapsedMs = Date.now() - started
  for (const answer of answers) {
    t.equal(answer.statusCode, 503, answer.body)
    t.match(JSON.parse(answer.body), { statusCode: 503, code: 'DATABASE_UNAVAILABLE' })
  }
  // Bounded by the query and connect timeouts (1 s and 5 s), far from "forever".
  t.ok(elapsedMs < 20_000, `answered in ${elapsedMs} ms`)
  t.equal((await app.inject({ url: '/health' })).statusCode, 200)
  await proxy.restore()
  const after = await recover(run, 5000)
  t.ok(after.recovered, `served again ${after.elapsedMs} ms after the database answered again`)
})
