// At start, before anything is sealed or counted: the key this instance seals secrets with must be
// the one the database's secrets were sealed with (its fingerprint is recorded there), or, during
// a rotation, one of the previous keys must be. Otherwise the instance refuses to start.
import fp from 'fastify-plugin'
import type { Queryable } from '../database/index.js'
import { judgeKey, refusalMessage } from '../../lib/secrets/fingerprint.js'
import { readKeyFile, type SecretSealer } from './secrets.js'
import type { Config } from './config.js'

/** An instance whose key is not the deployment's: the message names the variable and the way out. */
export class SecretKeyRefused extends Error {
  override name = 'SecretKeyRefused'
  readonly code = 'SECRET_KEY_REFUSED'
}

const READ_SQL = 'SELECT fingerprint FROM secret_key_fingerprint'
// Two instances starting at once on an empty table: one row is written, the other reads it.
const RECORD_SQL = 'INSERT INTO secret_key_fingerprint (fingerprint) VALUES ($1) ON CONFLICT (singleton) DO NOTHING'
// After `npm run reseal` sealed every secret under the current key: a previous key's fingerprint
// gives way to the current key's.
const REPLACE_SQL = 'UPDATE secret_key_fingerprint SET fingerprint = $1, recorded_at = now() WHERE fingerprint = ANY($2::text[])'

async function recorded (db: Queryable): Promise<string | undefined> {
  return (await db.query<{ fingerprint: string }>(READ_SQL)).rows[0]?.fingerprint
}

/**
 * Checks the configured key against the database's fingerprint, recording it when there is none;
 * a previous key's is accepted (a rotation under way). Throws SecretKeyRefused for any other key,
 * and (before a key file is made) for no key at all.
 */
export async function checkSecretKey (db: Queryable, sealer: SecretSealer, config: Pick<Config, 'DATA_DIR'>): Promise<'recorded' | 'kept' | 'rotating'> {
  const before = await recorded(db)
  // No key set and no key file: making one would only make a key the database does not know.
  if (before !== undefined && sealer.settings.secret === undefined && await readKeyFile(config) === undefined) {
    throw new SecretKeyRefused(refusalMessage(sealer.settings))
  }
  const { current, previous } = await sealer.fingerprints()
  switch (judgeKey(before, current, previous)) {
    case 'keep': return 'kept'
    case 'refuse': throw new SecretKeyRefused(refusalMessage(sealer.settings))
    case 'accept': return 'rotating'
    case 'record': {
      await db.query(RECORD_SQL, [current])
      const now = await recorded(db)
      if (now !== current && !previous.includes(now ?? '')) throw new SecretKeyRefused(refusalMessage(sealer.settings))
      return 'recorded'
    }
  }
}

/**
 * Records the current key's fingerprint in place of a previous key's, once every secret is sealed
 * under the current key (`npm run reseal`, with nothing left unreadable). True when it did.
 */
export async function recordResealedKey (db: Queryable, sealer: SecretSealer): Promise<boolean> {
  const { current, previous } = await sealer.fingerprints()
  const { rowCount } = await db.query(REPLACE_SQL, [current, previous])
  return rowCount === 1
}

export default fp(async (fastify) => {
  const outcome = await checkSecretKey(fastify.db, fastify.secrets, fastify.config).catch(async (err: unknown) => {
    // The instance will not start, and Fastify runs no onClose hook after a failed start: the
    // database (the embedded one's worker) is closed here, or the process could not exit.
    await fastify.db.close()
    throw err
  })
  if (outcome === 'recorded') fastify.log.info('the database records the fingerprint of this instance\'s secret key')
  if (outcome === 'rotating') fastify.log.info('the secret key is being rotated: the database records a previous key\'s fingerprint until `npm run reseal`')
}, { name: 'secret-key-check', dependencies: ['config', 'database', 'secrets'] })
