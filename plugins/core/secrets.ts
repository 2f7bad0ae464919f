// The key that seals stored secrets (adapter passwords, users' Git tokens), and sealing with it.
import fp from 'fastify-plugin'
import type { FastifyBaseLogger } from 'fastify'
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Config } from './config.js'
import { deriveKey, generateSecret, open, seal } from '../../lib/auth/secret-box.js'

/**
 * Seals and opens secrets bound to a context (an adapter id, a user and provider): a sealed value
 * copied to another context does not open. `open` throws SecretKeyMismatch (lib/auth/secret-box.ts)
 * when this key did not seal the value; each caller says which stored secret that was.
 */
export interface SecretSealer {
  seal: (secret: string, context: string) => Promise<string>
  open: (sealed: string, context: string) => Promise<string>
}

export const KEY_FILE = 'orchestrator-secret.key'

type KeyConfig = Pick<Config, 'ORCHESTRATOR_SECRET_KEY' | 'DATA_DIR' | 'DATABASE_URL'>

/**
 * The key comes from ORCHESTRATOR_SECRET_KEY, else from DATA_DIR/orchestrator-secret.key, made on
 * first use. Instances sharing a PostgreSQL server must share the key: set the variable there.
 */
export function secretSealer (config: KeyConfig, log: FastifyBaseLogger): SecretSealer {
  let key: Promise<Buffer> | undefined
  const getKey = async (): Promise<Buffer> => {
    key ??= loadKey(config, log).catch((err: unknown) => { key = undefined; throw err })
    return await key
  }
  return {
    seal: async (secret, context) => seal(await getKey(), secret, context),
    open: async (sealed, context) => open(await getKey(), sealed, context)
  }
}

async function loadKey (config: KeyConfig, log: FastifyBaseLogger): Promise<Buffer> {
  if (config.ORCHESTRATOR_SECRET_KEY !== undefined) return deriveKey(config.ORCHESTRATOR_SECRET_KEY)
  const file = path.resolve(config.DATA_DIR, KEY_FILE)
  const existing = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined
    throw err
  })
  if (existing !== undefined) return deriveKey(existing.trim())
  // Written aside, then linked into place: link fails if another process got there first, and a
  // reader never sees a half-written key.
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
  return deriveKey((await readFile(file, 'utf8')).trim())
}

declare module 'fastify' {
  interface FastifyInstance {
    secrets: SecretSealer
  }
}

export default fp(async (fastify) => {
  fastify.decorate('secrets', secretSealer(fastify.config, fastify.log))
}, { name: 'secrets', dependencies: ['config'] })
