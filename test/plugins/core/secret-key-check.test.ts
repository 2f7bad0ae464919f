// One key for the deployment: the database records the fingerprint of the key that seals its
// secrets, and an instance started with another key (or none) refuses to start, naming the
// variable it was given and the rotation procedure; a rotation (the old key among the previous
// ones) goes through. On both databases.
import t, { type Test } from 'tap'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { buildTestApp, createTestDatabase, testConfig, testDatabases, type TestApp, type TestDatabase } from '../../helper.js'
import { KEY_FILE } from '../../../plugins/core/secrets.js'
import { resealAll } from '../../../reseal-all.js'
import { recordResealedKey } from '../../../plugins/core/secret-key-check.js'
import { keyFingerprint } from '../../../lib/secrets/fingerprint.js'
import { deriveKey } from '../../../lib/secrets/secret-box.js'

const KEY_A = 'first-deployment-secret-key-0123456789ab'
const KEY_B = 'second-deployment-secret-key-987654321cd'
const fingerprintOf = (secret: string): string => keyFingerprint(deriveKey(secret))

async function recorded (app: TestApp): Promise<string[]> {
  return (await app.db.query<{ fingerprint: string }>('SELECT fingerprint FROM secret_key_fingerprint')).rows.map((row) => row.fingerprint)
}

/** Starts an instance on `database` with `env` only (no key of the test database's), in a DATA_DIR of its own. */
async function start (t: Test, database: TestDatabase, env: Record<string, string>): Promise<TestApp> {
  const { SECRET_KEY: _ignored, ...rest } = database.env
  // The embedded database lives in its DATA_DIR: one instance at a time, on the same directory.
  const dataDir = database.kind === 'embedded' ? rest.DATA_DIR as string : await mkdtemp(path.join(os.tmpdir(), 'key-check-'))
  if (database.kind !== 'embedded') t.teardown(async () => { await rm(dataDir, { recursive: true, force: true }) })
  return await buildTestApp(t, { database: { kind: database.kind, env: { ...rest, DATA_DIR: dataDir } }, env })
}

for (const kind of testDatabases) {
  t.test(`one key for the deployment (${kind})`, async (t) => {
    const database = await createTestDatabase(t, kind, { migrated: true })
    const first = await start(t, database, { SECRET_KEY: KEY_A })
    t.same(await recorded(first), [fingerprintOf(KEY_A)], 'a fresh database records the key\'s fingerprint')
    t.notMatch(JSON.stringify(await recorded(first)), KEY_A, 'not the key')
    await first.close()

    const refused = start(t, database, { SECRET_KEY: KEY_B })
    await t.rejects(refused, {
      name: 'SecretKeyRefused',
      message: /^SECRET_KEY is not the key that sealed this database's secrets .*same SECRET_KEY.*SECRET_KEY_PREVIOUS, then `npm run reseal` \(docs\/deploying\.md/
    }, 'another key: refused, naming SECRET_KEY and the rotation')
    await t.rejects(start(t, database, { ORCHESTRATOR_SECRET_KEY: KEY_B }),
      { message: /^ORCHESTRATOR_SECRET_KEY is not the key .*ORCHESTRATOR_SECRET_KEY_PREVIOUS/ }, 'the old name: named as the operator wrote it')
    await t.rejects(start(t, database, {}), { message: /^SECRET_KEY is not set, and the key file under DATA_DIR is not the key/ }, 'no key at all')

    const oldName = await start(t, database, { ORCHESTRATOR_SECRET_KEY: KEY_A })
    t.same(await recorded(oldName), [fingerprintOf(KEY_A)], 'the old variable name still works')
    await oldName.close()

    // A rotation: the new key current, the old one previous. The old key's fingerprint stays until
    // `npm run reseal` has sealed everything under the new one.
    const rotated = await start(t, database, { SECRET_KEY: KEY_B, SECRET_KEY_PREVIOUS: KEY_A })
    t.same(await recorded(rotated), [fingerprintOf(KEY_A)], 'during the rotation, the old key\'s fingerprint')
    await rotated.close()
    const lagging = await start(t, database, { SECRET_KEY: KEY_A, SECRET_KEY_PREVIOUS: KEY_B })
    t.ok(lagging, 'an instance still on the old key, the new one previous (step 1 of the rotation), starts')
    await lagging.close()
    await t.rejects(start(t, database, { SECRET_KEY: KEY_B }), { name: 'SecretKeyRefused' }, 'the new key alone before the reseal: refused')
    const resealing = await start(t, database, { SECRET_KEY: KEY_B, SECRET_KEY_PREVIOUS: KEY_A })
    t.same(await resealAll(resealing.db, resealing.secrets), { resealed: 0, current: 0, unreadable: [] })
    t.equal(await recordResealedKey(resealing.db, resealing.secrets), true, 'the reseal records the new key')
    await resealing.close()
    const finished = await start(t, database, { SECRET_KEY: KEY_B })
    t.same(await recorded(finished), [fingerprintOf(KEY_B)], 'after the rotation, the new key alone')
    await finished.close()
    await t.rejects(start(t, database, { SECRET_KEY: KEY_A }), { name: 'SecretKeyRefused' }, 'the old key alone: refused')
  })
}

t.test('without a key: the key file is made at start and its fingerprint recorded; a restart reads it', async (t) => {
  const database = await createTestDatabase(t, 'embedded', { migrated: true })
  const first = await start(t, database, {})
  t.ok(await stat(path.join(database.env.DATA_DIR as string, KEY_FILE)))
  const [fingerprint] = await recorded(first)
  await first.close()
  const again = await start(t, database, {})
  t.same(await recorded(again), [fingerprint])
})

t.test('SECRET_KEY and its old name set to different keys: a configuration error naming both', async (t) => {
  t.throws(() => testConfig({ SECRET_KEY: KEY_A, ORCHESTRATOR_SECRET_KEY: KEY_B }), /SECRET_KEY and ORCHESTRATOR_SECRET_KEY \(its old name\)/)
  t.throws(() => testConfig({ SECRET_KEY_PREVIOUS: KEY_A, ORCHESTRATOR_SECRET_KEY_PREVIOUS: KEY_B }), /SECRET_KEY_PREVIOUS and ORCHESTRATOR_SECRET_KEY_PREVIOUS/)
  t.ok(testConfig({ SECRET_KEY: KEY_A, ORCHESTRATOR_SECRET_KEY: KEY_A }), 'the same key under both names is fine')
})
