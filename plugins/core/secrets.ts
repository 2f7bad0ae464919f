// The key that seals stored secrets (adapter passwords, users' Git tokens), and sealing with it.
import fp from 'fastify-plugin'
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Config } from './config.js'
import { deriveKey, generateSecret, keyId, open, seal, sealedKeyId, SecretKeyMismatch } from '../../lib/secrets/secret-box.js'
import { keyFingerprint } from '../../lib/secrets/fingerprint.js'
import { keySettings, type KeySettings } from '../../lib/secrets/key-settings.js'

/**
 * Seals and opens secrets bound to a context (an adapter id, a user and provider): a sealed value
 * copied to another context does not open. `open` throws SecretKeyMismatch (lib/secrets/secret-box.ts)
 * when no configured key (the current one, or one of SECRET_KEY_PREVIOUS) sealed the
 * value; each caller says which stored secret that was.
 */
export interface SecretSealer {
  seal: (secret: string, context: string) => Promise<string>
  open: (sealed: string, context: string) => Promise<string>
  /**
   * Opens `sealed`, and gives it sealed again under the current key (`resealed`) when a previous
   * key sealed it. Throws SecretKeyMismatch when no key opens it.
   */
  unseal: (sealed: string, context: string) => Promise<{ secret: string, resealed?: string }>
  /** The fingerprints (lib/secrets/fingerprint.ts) of the current key and of the previous ones. */
  fingerprints: () => Promise<{ current: string, previous: string[] }>
  /** Where the key comes from: the variables as set (their names for messages). */
  settings: KeySettings
}

export const KEY_FILE = 'orchestrator-secret.key'

/** Where the warning about a generated key file goes. */
export interface KeyLog { warn: (details: object, message: string) => void }

type KeyConfig = Partial<Pick<Config, 'SECRET_KEY' | 'SECRET_KEY_PREVIOUS' | 'ORCHESTRATOR_SECRET_KEY' | 'ORCHESTRATOR_SECRET_KEY_PREVIOUS' | 'DATABASE_URL'>> &
  Pick<Config, 'DATA_DIR'>

interface Keys {
  current: Buffer
  /** Every key that may open a value, by key id: the current one and the previous ones. */
  byId: Map<string, Buffer>
}

/**
 * The key comes from SECRET_KEY (or its old name ORCHESTRATOR_SECRET_KEY), else from
 * DATA_DIR/orchestrator-secret.key, made on first use. Instances sharing a PostgreSQL server must
 * share the key: set the variable there (plugins/core/secret-key-check.ts refuses a start with
 * another). Values sealed under SECRET_KEY_PREVIOUS (or under the key file, once the variable is
 * set) still open, and `unseal` gives them sealed again under the current key.
 */
export function secretSealer (config: KeyConfig, log: KeyLog): SecretSealer {
  const settings = keySettings(config)
  let keys: Promise<Keys> | undefined
  const getKeys = async (): Promise<Keys> => {
    keys ??= loadKeys(settings, config, log).catch((err: unknown) => { keys = undefined; throw err })
    return await keys
  }
  async function openAny (sealed: string, context: string): Promise<{ secret: string, current: boolean }> {
    const { current, byId } = await getKeys()
    const id = sealedKeyId(sealed)
    const key = id === undefined ? undefined : byId.get(id)
    if (key === undefined) {
      throw new SecretKeyMismatch(`sealed under key ${id ?? '(unknown format)'}, which is neither ${settings.variable} (${keyId(current)}) ` +
        `nor one of ${settings.previousVariable}`)
    }
    return { secret: open(key, sealed, context), current: key === current }
  }
  return {
    seal: async (secret, context) => seal((await getKeys()).current, secret, context),
    open: async (sealed, context) => (await openAny(sealed, context)).secret,
    async unseal (sealed, context) {
      const { secret, current } = await openAny(sealed, context)
      return current ? { secret } : { secret, resealed: seal((await getKeys()).current, secret, context) }
    },
    async fingerprints () {
      const { current, byId } = await getKeys()
      return { current: keyFingerprint(current), previous: [...byId.values()].filter((key) => key !== current).map(keyFingerprint) }
    },
    settings
  }
}

async function loadKeys (settings: KeySettings, config: KeyConfig, log: KeyLog): Promise<Keys> {
  const secrets = [...settings.previous]
  let current: Buffer
  if (settings.secret !== undefined) {
    current = deriveKey(settings.secret)
    // A deployment moving from the generated key file to the variable keeps reading what the file's key sealed.
    const file = await readKeyFile(config)
    if (file !== undefined) secrets.push(file)
  } else {
    current = deriveKey(await keyFileSecret(config, log))
  }
  const byId = new Map<string, Buffer>()
  for (const secret of secrets) {
    const key = deriveKey(secret)
    byId.set(keyId(key), key)
  }
  byId.set(keyId(current), current)
  return { current, byId }
}

/** The secret of DATA_DIR's key file; undefined when there is none. */
export async function readKeyFile (config: Pick<Config, 'DATA_DIR'>): Promise<string | undefined> {
  const existing = await readFile(path.resolve(config.DATA_DIR, KEY_FILE), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined
    throw err
  })
  return existing?.trim()
}

async function keyFileSecret (config: KeyConfig, log: KeyLog): Promise<string> {
  const existing = await readKeyFile(config)
  if (existing !== undefined) return existing
  // Written aside, then linked into place: link fails if another process got there first, and a
  // reader never sees a half-written key.
  const file = path.resolve(config.DATA_DIR, KEY_FILE)
  await mkdir(config.DATA_DIR, { recursive: true })
  const partial = `${file}.${process.pid}.${Date.now()}.partial`
  await writeFile(partial, generateSecret() + '\n', { mode: 0o600 })
  try {
    await link(partial, file)
    log.warn({ file, shared: config.DATABASE_URL !== undefined },
      'generated the key that encrypts stored secrets (adapter passwords, Git tokens); instances sharing a database need the same SECRET_KEY')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  } finally {
    await unlink(partial)
  }
  return (await readFile(file, 'utf8')).trim()
}

declare module 'fastify' {
  interface FastifyInstance {
    secrets: SecretSealer
  }
}

export default fp(async (fastify) => {
  fastify.decorate('secrets', secretSealer(fastify.config, fastify.log))
}, { name: 'secrets', dependencies: ['config'] })
