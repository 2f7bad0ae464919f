import { hash, randomBytes, timingSafeEqual } from 'node:crypto'

// 32 random bytes (256 bits) as base64url: 43 characters of [A-Za-z0-9_-].
const TOKEN_BYTES = 32
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

/** A fresh session or access token. */
export function generateToken (): string {
  return randomBytes(TOKEN_BYTES).toString('base64url')
}

/** True when `value` has the form of a token this service makes (anything else is refused unread). */
export function isWellFormedToken (value: string): boolean {
  return TOKEN_PATTERN.test(value)
}

/** What the database keeps of a token or client secret: its SHA-256 (the value is 256 random bits). */
export function tokenDigest (token: string): string {
  return hash('sha256', token, 'hex')
}

/** A client id in the platform's form: 24 hexadecimal characters. */
export function generateClientId (): string {
  return randomBytes(12).toString('hex')
}

export const CLIENT_ID_PATTERN = '^[0-9a-f]{24}$'

/** Compares a presented secret's digest with a stored one in constant time. */
export function sameDigest (a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}

/**
 * The request target with any `token` query parameter removed (for logs): the rest of the
 * query is kept as sent.
 */
export function withoutQueryToken (url: string): string {
  const q = url.indexOf('?')
  if (q < 0) return url
  const kept = url.slice(q + 1).split('&').filter((part) => {
    const name = part.split('=', 1)[0] ?? ''
    let decoded = name
    try { decoded = decodeURIComponent(name.replace(/\+/g, ' ')) } catch {}
    return decoded !== 'token'
  })
  return kept.length === 0 ? url.slice(0, q) : `${url.slice(0, q)}?${kept.join('&')}`
}
