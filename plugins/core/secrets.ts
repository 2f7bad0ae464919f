// The key that seals stored secrets (adapter passwords, users' Git tokens), and sealing with it.
import fp from 'fastify-plugin'
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Config } from './config.js'
import { deriveKey, generateSecret, keyId, open, seal, sealedKeyId, SecretKeyMismatch } from '../../lib/auth/secret-box.js'

/**
 * Seals and opens secrets bound to a context (an adapter id, a user and provider): a sealed value
 * copied to another context does not open. `open` throws SecretKeyMismatch (lib/auth/secret-box.ts)
 * when no configured key (the current one, or one of ORCHESTRATOR_SECRET_KEY_PREVIOUS) sealed the
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
}

export const KEY_FILE = 'orchestrator-secret.key'

/** Where the warning about a generated key file goes. */
export interface KeyLog { warn: (details: object, message: string) => void }

type KeyConfig = Pick<Config, 'ORCHESTRATOR_SECRET_KEY' | 'ORCHESTRATOR_SECRET_KEY_PREVIOUS' | 'DATA_DIR' | 'DATABASE_URL'>

interface Keys {
  current: Buffer
  /** Every key that may open a value, by key id: the current one and the previous ones. */
  byId: Map<string, Buffer>
}

/**
 * The key comes from ORCHESTRATOR_SECRET_KEY, else from DATA_DIR/orchestrator-secret.key, made on
 * first use. Instances sharing a PostgreSQL server must share the key: set the variable there.
 * Values sealed under ORCHESTRATOR_SECRET_KEY_PREVIOUS (or under the key file, once the variable
 * is set) still open, and `unseal` gives them sealed again under the current key.
 */
export function secretSealer (config: KeyConfig, log: KeyLog): SecretSealer {
  let keys: Promise<Keys> | undefined
  const getKeys = async (): Promise<Keys> => {
    keys ??= loadKeys(config, log).catch((err: unknown) => { keys = undefined; throw err })
    return await keys
  }
  async function openAny (sealed: string, context: string): Promise<{ secret: string, current: boolean }> {
    const { current, byId } = await getKeys()
    const id = sealedKeyId(sealed)
    const key = id === undefined ? undefined : byId.get(id)
    if (key === undefined) {
      throw new SecretKeyMismatch(`sealed under key ${id ?? '(unknown format)'}, which is neither ORCHESTRATOR_SECRET_KEY (${keyId(current)}) ` +
        'nor one of ORCHESTRATOR_SECRET_KEY_PREVIOUS')
    }
    return { secret: open(key, sealed, context), current: key === current }
  }
  return {
    seal: async (secret, context) => seal((await getKeys()).current, secret, context),
    open: async (sealed, context) => (await openAny(sealed, context)).secret,
    async unseal (sealed, context) {
      const { secret, current } = await openAny(sealed, context)
      return current ? { secret } : { secret, resealed: seal((await getKeys()).current, secret, context) }
    }
  }
}

/** The keys of ORCHESTRATOR_SECRET_KEY_PREVIOUS: comma-separated, each as the key itself is given. */
export function previousSecrets (value: string | undefined): string[] {
  return (value ?? '').split(',').map((secret) => secret.trim()).filter((secret) => secret !== '')
}

async function loadKeys (config: KeyConfig, log: KeyLog): Promise<Keys> {
  const secrets = previousSecrets(config.ORCHESTRATOR_SECRET_KEY_PREVIOUS)
  let current: Buffer
  if (config.ORCHESTRATOR_SECRET_KEY !== undefined) {
    current = deriveKey(config.ORCHESTRATOR_SECRET_KEY)
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

async function readKeyFile (config: KeyConfig): Promise<string | undefined> {
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
      'generated the key that encrypts stored secrets (adapter passwords, Git tokens); instances sharing a database need the same ORCHESTRATOR_SECRET_KEY')
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
