// Browsers send the session cookie with any request to this service, whatever page made it: a
// page on another port of the same host, or on a sibling subdomain, is the same "site" to
// SameSite. A write whose credentials came from the cookie is therefore accepted only from the
// service's own origin, as the browser reports it (Sec-Fetch-Site, else Origin). Requests that
// carry neither header come from no browser (curl, the platform's clients) and pass.

/** The header the studio page sends with its calls: a 401 then carries no Basic challenge, so the browser opens no dialog of its own. */
export const PAGE_REQUEST_HEADER = 'x-requested-with'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export interface OriginHeaders {
  origin?: string | string[]
  'sec-fetch-site'?: string | string[]
}

const first = (value: string | string[] | undefined): string | undefined => Array.isArray(value) ? value[0] : value

/**
 * Why a request authenticated by the cookie may not do what it asks, or undefined when it may:
 * reads are always allowed; a write needs `Sec-Fetch-Site: same-origin` (or `none`, the user's own
 * navigation) or, from a browser that does not send it, an `Origin` among `ownOrigins`. A GET that
 * changes state (`changesState`: GET /logout, which the platform's clients call) is a write: an
 * image or a link on another origin of the same site would otherwise end the user's session.
 */
export function crossOriginRefusal (method: string, headers: OriginHeaders, ownOrigins: readonly string[], changesState = false): string | undefined {
  if (SAFE_METHODS.has(method) && !changesState) return undefined
  const site = first(headers['sec-fetch-site'])?.trim().toLowerCase()
  if (site !== undefined) return site === 'same-origin' || site === 'none' ? undefined : `Sec-Fetch-Site: ${site}`
  const origin = first(headers.origin)?.trim()
  if (origin === undefined) return undefined
  return ownOrigins.includes(origin.toLowerCase()) ? undefined : `Origin: ${origin}`
}

/** The origin (scheme://host[:port], lower case) of an absolute URL; undefined for a relative one. */
export function originOf (url: string): string | undefined {
  try {
    return new URL(url).origin.toLowerCase()
  } catch {
    return undefined
  }
}
