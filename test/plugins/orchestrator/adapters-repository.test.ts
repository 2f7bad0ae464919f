import t from 'tap'
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { KEY_FILE } from '../../../plugins/core/secrets.js'
import { ADMIN, adminAuth, buildTestApp, captureLogs, createTestDatabase, testDatabases, type TestApp, type TestDatabase } from '../../helper.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'

const KEY_A = 'first-orchestrator-secret-key-0123456789'
const KEY_B = 'second-orchestrator-secret-key-987654321'
const QUERY = { params: { path: '/restconf/data/tailf-ncs:devices/device=ce0/address', accept: 'application/yang-data+json' } }

const headers = { authorization: adminAuth }
const relay = async (app: TestApp, id = 'nso') => await app.inject({ method: 'POST', url: `/orchestrator_manager/restQuery/${id}`, headers, payload: QUERY })

t.test('without ORCHESTRATOR_SECRET_KEY a key file is made once under DATA_DIR, readable by the owner only', async (t) => {
  const nso = await startNso(t)
  const database = await createTestDatabase(t, 'embedded', { migrated: true })
  const keyFile = path.join(database.env.DATA_DIR as string, KEY_FILE)
  const first = await buildTestApp(t, { database })
  t.ok(await stat(keyFile), 'made at start: the database records its fingerprint')
  t.equal((await createAdapter(first, nsoAdapter('nso', nso))).statusCode, 200)
  const info = await stat(keyFile)
  t.equal(info.mode & 0o777, 0o600)
  const key = await readFile(keyFile, 'utf8')
  t.match(key, /^[\w-]{43}\n$/)
  t.equal((await relay(first)).statusCode, 200)
  await first.close()

  // The next start on the same data reads the same key and can still use the stored password.
  const second = await buildTestApp(t, { database })
  t.equal((await relay(second)).statusCode, 200)
  t.equal(await readFile(keyFile, 'utf8'), key, 'kept, not replaced')
})

t.test('with ORCHESTRATOR_SECRET_KEY no file is made; another key cannot read the password and nothing goes upstream', async (t) => {
  const nso = await startNso(t)
  const database = await createTestDatabase(t, 'embedded', { migrated: true })
  const first = await buildTestApp(t, { database, env: { ORCHESTRATOR_SECRET_KEY: KEY_A } })
  t.equal((await createAdapter(first, nsoAdapter('nso', nso))).statusCode, 200)
  t.equal((await relay(first)).statusCode, 200)
  await t.rejects(stat(path.join(database.env.DATA_DIR as string, KEY_FILE)), { code: 'ENOENT' })
  // A database from before its key's fingerprint was recorded: an instance with another key starts.
  await first.db.query('DELETE FROM secret_key_fingerprint')
  await first.close()

  nso.reset()
  const wrongKey = await buildTestApp(t, { database, env: { ORCHESTRATOR_SECRET_KEY: KEY_B } })
  const refused = await relay(wrongKey)
  t.equal(refused.statusCode, 503)
  t.match(refused.json(), { code: 'ADAPTER_SECRET_UNREADABLE', message: /adapter "nso" was sealed with a key that neither SECRET_KEY nor SECRET_KEY_PREVIOUS \(or their old names ORCHESTRATOR_SECRET_KEY, ORCHESTRATOR_SECRET_KEY_PREVIOUS\) opens \(sealed under key \w+, which is neither ORCHESTRATOR_SECRET_KEY \(\w+\).* same SECRET_KEY / }, 'the reason names the variable set')
  t.same(nso.received, [], 'nothing upstream')
  const reset = await wrongKey.inject({ method: 'PUT', url: '/orchestrator_manager/adapters/nso', headers, payload: { password: nso.password } })
  t.equal(reset.statusCode, 200)
  t.equal((await relay(wrongKey)).statusCode, 200, 'storing the password again under this key mends it')
})

t.test('passwords never reach the log', async (t) => {
  const nso = await startNso(t, { password: 'Upstream-Pa55-Secret' })
  const logs = captureLogs()
  const app = await buildTestApp(t, { database: 'any', env: { LOG_LEVEL: 'trace' }, logStream: logs })

  t.equal((await createAdapter(app, nsoAdapter('nso', nso))).statusCode, 200)
  const bad = await app.inject({
    method: 'POST',
    url: '/orchestrator_manager/adapters',
    headers,
    payload: { id: 'bad', baseUrl: 'http://admin:Credential-In-Url@nso', username: 'admin', password: 'Bad-Adapter-Secret' }
  })
  t.equal(bad.statusCode, 400)
  t.equal((await relay(app)).statusCode, 200)
  nso.mode = 'error'
  t.equal((await relay(app)).statusCode, 502, 'an upstream error is logged as an error')
  nso.mode = 'normal'
  const changed = await app.inject({ method: 'PUT', url: '/orchestrator_manager/adapters/nso', headers, payload: { password: 'Changed-Pa55-Secret' } })
  t.equal(changed.statusCode, 200)
  t.equal((await relay(app)).statusCode, 502, 'upstream 401 with the changed password')
  await app.close()

  const log = logs.lines.join('')
  t.ok(logs.lines.length > 10, 'the log was captured')
  t.match(log, /incoming request/)
  t.match(log, /request failed/, 'the 502 was logged')
  const secrets = ['Upstream-Pa55-Secret', 'Credential-In-Url', 'Bad-Adapter-Secret', 'Changed-Pa55-Secret', ADMIN.password]
  for (const secret of secrets) {
    t.notOk(log.includes(secret), `${secret} is not in the log`)
    t.notOk(log.includes(Buffer.from(`admin:${secret}`).toString('base64')), 'nor as a Basic credential')
  }
})

for (const database of testDatabases.filter((kind) => kind === 'postgres')) {
  t.test(`instances sharing ${database} see each other's changes within the cache TTL`, async (t) => {
    const first = await startNso(t)
    const second = await startNso(t)
    const shared: TestDatabase = await createTestDatabase(t, database, { migrated: true })
    const env = { ORCHESTRATOR_SECRET_KEY: KEY_A }
    const writer = await buildTestApp(t, { database: shared, env })
    const eager = await buildTestApp(t, { database: shared, env: { ...env, ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '0' } })
    const lazy = await buildTestApp(t, { database: shared, env: { ...env, ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000' } })

    t.equal((await createAdapter(writer, nsoAdapter('nso', first))).statusCode, 200)
    t.equal((await relay(eager)).statusCode, 200)
    t.equal((await relay(lazy)).statusCode, 200)
    const eagerPool = eager.orchestrator.poolOf('nso')
    t.equal(first.received.length, 2)

    const moved = await writer.inject({ method: 'PUT', url: '/orchestrator_manager/adapters/nso', headers, payload: { baseUrl: second.url } })
    t.equal(moved.statusCode, 200)
    t.equal((await relay(eager)).statusCode, 200)
    t.equal(second.received.length, 1, 'the other instance follows the change')
    t.equal(eagerPool?.closed, true, 'and rebuilt its pool')
    t.equal((await relay(lazy)).statusCode, 200)
    t.equal(first.received.length, 3, 'an instance within its cache TTL still uses the row it read (the staleness bound)')

    t.equal((await writer.inject({ method: 'DELETE', url: '/orchestrator_manager/adapters/nso', headers })).statusCode, 200)
    t.equal((await relay(eager)).statusCode, 404, 'deleted elsewhere: 404')
    t.equal(eager.orchestrator.poolOf('nso'), undefined)

    t.equal((await createAdapter(writer, nsoAdapter('nso', first))).statusCode, 200, 're-created under the same id')
    t.equal((await relay(eager)).statusCode, 200)
    t.equal(first.received.length, 4, 'the re-created adapter is used')
  })
}
