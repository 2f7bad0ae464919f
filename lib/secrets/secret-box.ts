import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'

// Secrets the service must send on (adapter passwords, users' Git tokens) cannot be hashed: they
// are encrypted at rest with AES-256-GCM. A database dump or backup alone does not reveal them; the
// key lives outside the database (SECRET_KEY, or a key file under DATA_DIR).

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16
// Fixed HKDF salt and info: the secret is the only input that varies between deployments.
const HKDF_SALT = 'netauto/orchestrator-adapters'
const HKDF_INFO = 'adapter-password/aes-256-gcm/v1'

/** Thrown when a sealed value was made under another key (or was altered). */
export class SecretKeyMismatch extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'SecretKeyMismatch'
  }
}

/** A 32-byte AES key from a configured secret of at least 32 characters. */
export function deriveKey (secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, HKDF_INFO, 32))
}

/** A key for `purpose` from a configured secret: the same wherever the secret is, unrelated to the sealing key. */
export function deriveSubkey (secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, `subkey/${purpose}`, 32))
}

/** A short public fingerprint of the key, stored beside each value so a wrong key is named as such. */
export function keyId (key: Buffer): string {
  return createHash('sha256').update('key-id\0').update(key).digest('base64url').slice(0, 8)
}

/**
 * Encrypts `plaintext` as `v1.<keyId>.<iv>.<ciphertext>.<tag>` (base64url parts). `context` (the
 * adapter id) is authenticated too, so a value copied onto another row does not decrypt.
 */
export function seal (key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [VERSION, keyId(key), iv.toString('base64url'), ciphertext.toString('base64url'),
    cipher.getAuthTag().toString('base64url')].join('.')
}

/** The id of the key that sealed `sealed`; undefined when it is not a sealed value of a known format. */
export function sealedKeyId (sealed: string): string | undefined {
  const parts = sealed.split('.')
  return parts.length === 5 && parts[0] === VERSION ? parts[1] : undefined
}

/** Decrypts what `seal` made with the same key and context; throws SecretKeyMismatch otherwise. */
export function open (key: Buffer, sealed: string, context: string): string {
  const parts = sealed.split('.')
  if (parts.length !== 5 || parts[0] !== VERSION) throw new SecretKeyMismatch('not a sealed value of a known format')
  const [, id, iv, ciphertext, tag] = parts as [string, string, string, string, string]
  if (id !== keyId(key)) throw new SecretKeyMismatch(`sealed under key ${id}, the configured key is ${keyId(key)}`)
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8')
  } catch {
    throw new SecretKeyMismatch('the sealed value does not authenticate (altered, or sealed for another record)')
  }
}

/** A fresh random secret for the key file written when no key is configured. */
export function generateSecret (): string {
  return randomBytes(32).toString('base64url')
}
