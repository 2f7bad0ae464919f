import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

// scrypt with OWASP's minimum cost (N=2^17 would be stronger but costs 128 MiB per hash).
const PARAMS = { N: 16384, r: 8, p: 1 }
const KEY_LENGTH = 32

function derive (password: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_LENGTH, { ...params, maxmem: 64 * 1024 * 1024 }, (err, key) => {
      if (err !== null) reject(err)
      else resolve(key)
    })
  })
}

/** Hashes a password as `scrypt$N$r$p$salt$key` (base64url), with a fresh random salt. */
export async function hashPassword (password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, PARAMS)
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** Compares in constant time; a malformed stored hash never matches. */
export async function verifyPassword (password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || key === undefined) return false
  const expected = Buffer.from(key, 'base64url')
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** A strong random password for the bootstrap administrator. */
export function generatePassword (): string {
  return randomBytes(18).toString('base64url')
}
