// Adapter settings (spec 4.4/4.5, design "Orchestrator relay"): the base URL an adapter points at,
// its optional CA bundle, and the one place the upstream request target is built from them.
import { X509Certificate } from 'node:crypto'
import type { CheckResult } from '../http/check-result.js'

export const MAX_BASE_URL_LENGTH = 2048

const fail = (reason: string): { ok: false, reason: string } => ({ ok: false, reason })

/**
 * Checks an adapter's `baseUrl` and returns it normalised (lower-case host, default port dropped,
 * no trailing slash). Messages never echo the value: it may carry credentials by mistake.
 */
export function checkBaseUrl (value: string, field = 'baseUrl'): CheckResult<string> {
  if (value.length > MAX_BASE_URL_LENGTH) return fail(`${field} must be at most ${MAX_BASE_URL_LENGTH} characters`)

  if (/[\x00-\x20\x7f]/.test(value)) return fail(`${field} must not contain spaces or control characters`)
  if (value.includes('\\')) return fail(`${field} must not contain a backslash`)
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return fail(`${field} must be an absolute http or https URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(`${field} must use http or https`)
  if (url.username !== '' || url.password !== '') {
    return fail(`${field} must not carry credentials (user:password@); set username and password instead`)
  }
  // Checked on the text: the parser drops an empty '?' or '#'.
  if (value.includes('?')) return fail(`${field} must not carry a query ('?')`)
  if (value.includes('#')) return fail(`${field} must not carry a fragment ('#')`)
  return { ok: true, value: url.origin + basePathOf(url) }
}

function basePathOf (url: URL): string {
  return url.pathname.replace(/\/+$/, '')
}

/** Where a pool connects (`origin`) and the path prefix every relayed path goes under. */
export interface UpstreamBase {
  origin: string
  basePath: string
}

/** Splits a base URL checked by `checkBaseUrl` into the pool's origin and the path prefix. */
export function splitBaseUrl (baseUrl: string): UpstreamBase {
  const url = new URL(baseUrl)
  return { origin: url.origin, basePath: basePathOf(url) }
}

/**
 * The request target sent upstream: the adapter's base path followed by the relay path, which
 * `checkRelayPath` has made sure starts with a single '/' (so `/prefix` + `/restconf/data` is
 * `/prefix/restconf/data`, and the path can never leave the base).
 */
export function upstreamPath (base: UpstreamBase, relayPath: string): string {
  return base.basePath + relayPath
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g

/** Checks a CA bundle: one or more PEM certificates, each of which must parse. */
export function checkCaBundle (value: string, field = 'ca'): CheckResult<string> {
  const blocks = value.match(PEM_CERTIFICATE) ?? []
  if (blocks.length === 0) return fail(`${field} must hold at least one PEM certificate (-----BEGIN CERTIFICATE-----)`)
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block)
    } catch {
      return fail(`${field}: certificate ${i + 1} is not a valid X.509 certificate`)
    }
  }
  return { ok: true, value }
}
