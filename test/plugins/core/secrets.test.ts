// Rotating SECRET_KEY (here under its old name, ORCHESTRATOR_SECRET_KEY): previous keys still open what they sealed, reading or
// `npm run reseal` seals it again under the new key, and a value no key opens is a clear 503.
import t from 'tap'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { KEY_FILE, secretSealer } from '../../../plugins/core/secrets.js'
import { previousSecrets } from '../../../lib/secrets/key-settings.js'
import { resealAll } from '../../../reseal-all.js'
import { gitCredentialsStore } from '../../../plugins/git/credentials-store.js'
import { deriveKey, keyId, sealedKeyId, SecretKeyMismatch } from '../../../lib/secrets/secret-box.js'
import type { GitProvider } from '../../../lib/git/providers.js'
import { ADMIN, adminAuth, buildTestApp, createUser, createTestDatabase, testConfig, testDatabases, type TestApp } from '../../helper.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'

const OLD = 'old-orchestrator-secret-key-0123456789abc'
const NEW = 'new-orchestrator-secret-key-9876543210xyz'
const OTHER = 'other-orchestrator-secret-key-5555555555555'
const QUERY = { params: { path: '/restconf/data/tailf-ncs:devices/device=ce0/address', accept: 'application/yang-data+json' } }
const headers = { authorization: adminAuth }
const relay = async (app: TestApp) => await app.inject({ method: 'POST', url: '/orchestrator_manager/restQuery/nso', headers, payload: QUERY })
const storedPassword = async (app: TestApp): Promise<string> =>
  (await app.db.query<{ password_sealed: string }>('SELECT password_sealed FROM orchestrator_adapters WHERE id = $1', ['nso'])).rows[0]?.password_sealed ?? ''
const quiet = { warn: () => {} }
const provider = { name: 'GitHub', url: 'http://git.invalid' } as unknown as GitProvider

t.test('previous keys are comma-separated, blanks ignored; the setting refuses a key shorter than 32 characters', async (t) => {
  t.same(previousSecrets(undefined), [])
  t.same(previousSecrets(` ${OLD} ,${OTHER}`), [OLD, OTHER])
  t.ok(testConfig({ ORCHESTRATOR_SECRET_KEY_PREVIOUS: `${OLD},${OTHER}` }))
  t.throws(() => testConfig({ ORCHESTRATOR_SECRET_KEY_PREVIOUS: `${OLD},short` }), /ORCHESTRATOR_SECRET_KEY_PREVIOUS/)
})

for (const kind of testDatabases) {
  t.test(`a rotation across two instances on one database (${kind})`, async (t) => {
    const nso = await startNso(t)
    const database = await createTestDatabase(t, kind, { migrated: true })
    const secondDataDir = await mkdtemp(path.join(os.tmpdir(), 'second-instance-'))
    t.teardown(async () => { await rm(secondDataDir, { recursive: true, force: true }) })
    // A embedded database is one instance: the second start follows the first on its DATA_DIR.
    const secondEnv = kind === 'embedded' ? {} : { DATA_DIR: secondDataDir }

    // A seals under the old key.
    const a = await buildTestApp(t, { database, env: { ORCHESTRATOR_SECRET_KEY: OLD } })
    t.equal((await createAdapter(a, nsoAdapter('nso', nso))).statusCode, 200)
    const store = gitCredentialsStore(a.db, a.secrets)
    await store.set(ADMIN.username, provider, { token: 'ghp_alice-token' })
    const sealedOld = await storedPassword(a)
    t.equal(sealedOld.split('.')[1], keyId(deriveKey(OLD)))
    if (kind === 'embedded') await a.close()

    // B has the new key and the old one as previous: it opens the old value and seals it again.
    const b = await buildTestApp(t, { database, env: { ORCHESTRATOR_SECRET_KEY: NEW, ORCHESTRATOR_SECRET_KEY_PREVIOUS: OLD, ...secondEnv } })
    t.equal((await relay(b)).statusCode, 200, 'B relays with the password the old key sealed')
    t.equal(sealedKeyId(await storedPassword(b)), keyId(deriveKey(NEW)), 'B stored it sealed under the new key')
    const bStore = gitCredentialsStore(b.db, b.secrets)
    t.match(await bStore.get(ADMIN.username, provider), { token: 'ghp_alice-token' })
    const token = (await b.db.query<{ token_sealed: string }>('SELECT token_sealed FROM git_credentials')).rows[0]?.token_sealed ?? ''
    t.equal(sealedKeyId(token), keyId(deriveKey(NEW)), 'the Git token too')
    t.match(await bStore.get(ADMIN.username, provider), { token: 'ghp_alice-token' }, 'read again under the new key')

    if (kind !== 'embedded') {
      // A, still on the old key alone, can no longer read it: a 503 naming both settings, nothing upstream.
      nso.reset()
      const refused = await relay(a)
      t.equal(refused.statusCode, 503)
      t.match(refused.json(), {
        code: 'ADAPTER_SECRET_UNREADABLE',
        message: /adapter "nso" was sealed with a key that neither SECRET_KEY nor SECRET_KEY_PREVIOUS \(or their old names ORCHESTRATOR_SECRET_KEY, ORCHESTRATOR_SECRET_KEY_PREVIOUS\) opens/
      })
      t.same(nso.received, [], 'nothing upstream')
      await t.rejects(store.get(ADMIN.username, provider), { code: 'GIT_CREDENTIAL_UNREADABLE', statusCode: 503, message: /ORCHESTRATOR_SECRET_KEY_PREVIOUS/ })
      await a.close()
    }
    // The first step of the documented order (old key current, new one previous) reads both.
    const prepared = await buildTestApp(t, { database, env: { ORCHESTRATOR_SECRET_KEY: OLD, ORCHESTRATOR_SECRET_KEY_PREVIOUS: NEW } })
    t.equal((await relay(prepared)).statusCode, 200, 'an instance that knows the new key as previous reads what B sealed')
    t.equal(sealedKeyId(await storedPassword(prepared)), keyId(deriveKey(OLD)), '...and seals it again under its own current key')
  })
}

t.test('the reseal command seals every row again in batches, and names what no key opens', async (t) => {
  const database = await createTestDatabase(t, 'any', { migrated: true })
  const nso = await startNso(t)
  const a = await buildTestApp(t, { database, env: { ORCHESTRATOR_SECRET_KEY: OLD } })
  for (const id of ['nso', 'nso-2', 'nso-3']) t.equal((await createAdapter(a, nsoAdapter(id, nso))).statusCode, 200)
  const store = gitCredentialsStore(a.db, a.secrets)
  for (const user of ['alice', 'bob', 'carol']) await createUser(a, { username: user })
  for (const user of ['alice', 'bob', 'carol']) await store.set(user, provider, { token: `token-of-${user}` })
  // One row sealed under a key nobody configures any more.
  const stray = secretSealer({ ORCHESTRATOR_SECRET_KEY: OTHER, DATA_DIR: a.config.DATA_DIR }, quiet)
  await a.db.query('UPDATE git_credentials SET token_sealed = $1 WHERE username = $2',
    [await stray.seal('lost', 'git-credential:github:carol'), 'carol'])

  const sealer = secretSealer({ ORCHESTRATOR_SECRET_KEY: NEW, ORCHESTRATOR_SECRET_KEY_PREVIOUS: OLD, DATA_DIR: a.config.DATA_DIR }, quiet)
  const counts = await resealAll(a.db, sealer, 2)
  t.same(counts, { resealed: 5, current: 0, unreadable: ['git_credentials carol/github'] })
  const again = await resealAll(a.db, sealer, 2)
  t.same(again, { resealed: 0, current: 5, unreadable: ['git_credentials carol/github'] }, 'a second run finds everything current')
  const { rows } = await a.db.query<{ sealed: string }>('SELECT password_sealed AS sealed FROM orchestrator_adapters UNION ALL SELECT token_sealed FROM git_credentials WHERE username <> $1', ['carol'])
  t.same(new Set(rows.map((row) => sealedKeyId(row.sealed))), new Set([keyId(deriveKey(NEW))]))
  const fresh = gitCredentialsStore(a.db, secretSealer({ ORCHESTRATOR_SECRET_KEY: NEW, DATA_DIR: a.config.DATA_DIR }, quiet))
  t.match(await fresh.get('bob', provider), { token: 'token-of-bob' }, 'the new key alone reads it now')
})

t.test('moving from the generated key file to ORCHESTRATOR_SECRET_KEY: the file\'s key opens what it sealed', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'key-file-'))
  t.teardown(async () => { await rm(dataDir, { recursive: true, force: true }) })
  const fromFile = secretSealer({ DATA_DIR: dataDir }, quiet)
  const sealed = await fromFile.seal('adapter-password', 'nso')
  t.ok((await readFile(path.join(dataDir, KEY_FILE), 'utf8')).length > 32, 'the key file was made')
  const fromVariable = secretSealer({ ORCHESTRATOR_SECRET_KEY: NEW, DATA_DIR: dataDir }, quiet)
  const opened = await fromVariable.unseal(sealed, 'nso')
  t.equal(opened.secret, 'adapter-password')
  t.equal(sealedKeyId(opened.resealed ?? ''), keyId(deriveKey(NEW)))
  t.same(await fromVariable.unseal(opened.resealed ?? '', 'nso'), { secret: 'adapter-password' }, 'a current value needs no resealing')

  // Replacing the key file: the old file content as a previous key.
  const old = (await readFile(path.join(dataDir, KEY_FILE), 'utf8')).trim()
  await writeFile(path.join(dataDir, KEY_FILE), `${OTHER}\n`)
  const replaced = secretSealer({ DATA_DIR: dataDir, ORCHESTRATOR_SECRET_KEY_PREVIOUS: old }, quiet)
  t.equal(await replaced.open(sealed, 'nso'), 'adapter-password')
  await t.rejects(secretSealer({ DATA_DIR: dataDir }, quiet).open(sealed, 'nso'), SecretKeyMismatch)
  await t.rejects(fromVariable.open('not sealed', 'nso'), { message: /unknown format/ })
})

t.test('npm run reseal: the command reports what it did, and exits 1 when a value opens with no key', async (t) => {
  const database = await createTestDatabase(t, 'any', { migrated: true })
  const nso = await startNso(t)
  const a = await buildTestApp(t, { database, env: { ORCHESTRATOR_SECRET_KEY: OLD } })
  t.equal((await createAdapter(a, nsoAdapter('nso', nso))).statusCode, 200)
  await a.close()
  const command = async (env: Record<string, string>): Promise<{ code: number, out: string, err: string }> => {
    const child = spawn(process.execPath, ['--import=./test/helpers/typescript.mjs', 'reseal.ts'], {
      env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...database.env, ...env }, stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s })
    child.stderr.setEncoding('utf8').on('data', (s: string) => { err += s })
    const [code] = await once(child, 'close') as [number]
    return { code, out, err }
  }
  const moved = await command({ SECRET_KEY: NEW, SECRET_KEY_PREVIOUS: OLD })
  t.equal(moved.code, 0, moved.err)
  t.match(moved.out, /Resealed: 1, already under the current key: 0, unreadable: 0/)
  const lost = await command({ SECRET_KEY: OTHER })
  t.equal(lost.code, 1)
  t.match(lost.err, /orchestrator_adapters nso: sealed with a key that neither SECRET_KEY nor SECRET_KEY_PREVIOUS opens/)
  const invalid = await command({ ORCHESTRATOR_SECRET_KEY_PREVIOUS: 'short' })
  t.equal(invalid.code, 1)
  t.match(invalid.err, /ORCHESTRATOR_SECRET_KEY_PREVIOUS/)
})
