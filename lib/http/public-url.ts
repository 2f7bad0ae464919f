import { compile } from '@fastify/proxy-addr'

export type TrustProxy = (address: string, hop: number) => boolean

/**
 * TRUST_PROXY as a trust function: "true" trusts every hop, a number that many hops, anything else
 * is a comma-separated list of addresses/CIDRs (or loopback, linklocal, uniquelocal). Unset: none.
 */
export function trustProxy (value: string | undefined): TrustProxy {
  if (value === undefined || value === 'false') return () => false
  if (value === 'true') return () => true
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  return compile(value.split(',').map((a) => a.trim()).filter((a) => a !== ''))
}

// A path prefix a proxy may announce: absolute, plain URL path characters, no dot segments.
const PREFIX = /^(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+\/?$/

export interface PublicBaseInput {
  /** PUBLIC_URL, when configured: it always wins. */
  publicUrl?: string
  /** Whether the peer is a trusted proxy (its X-Forwarded-* headers count). */
  trusted: boolean
  /** Scheme and host as Fastify derived them (from X-Forwarded-Proto/Host when trusted). */
  protocol: string
  host: string
  /** The X-Forwarded-Prefix header, if any. */
  forwardedPrefix?: string | string[]
}

/**
 * The base URL clients reach this service at, without a trailing slash: PUBLIC_URL, else (behind
 * a trusted proxy) scheme, host and prefix from the forwarded headers, else '' (links stay relative).
 */
export function publicBase (input: PublicBaseInput): string {
  if (input.publicUrl !== undefined) return input.publicUrl.replace(/\/+$/, '')
  if (!input.trusted) return ''
  const header = Array.isArray(input.forwardedPrefix) ? input.forwardedPrefix[0] : input.forwardedPrefix
  const prefix = header !== undefined && PREFIX.test(header.trim()) ? header.trim().replace(/\/+$/, '') : ''
  return `${input.protocol}://${input.host}${prefix}`
}

/** A request target's path, without its query (which may carry a credential: `?token=`). */
export function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query < 0 ? url : url.slice(0, query)
}
