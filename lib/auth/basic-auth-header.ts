/** The value of a Basic Authorization header for these credentials (RFC 7617, UTF-8). */
export function basicAuthorization (username: string, password: string): string {
  return 'Basic ' + Buffer.from(`${username}:${password}`, 'utf8').toString('base64')
}

/** The credentials in a Basic Authorization header, or undefined when it is absent or malformed. */
export function parseBasicAuthorization (header: string | undefined): { username: string, password: string } | undefined {
  const match = /^\s*basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(header ?? '')
  if (match?.[1] === undefined) return undefined
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

/**
 * The username in a Basic Authorization header, or '' when the header is absent or malformed.
 * Only for keying login-failure counters: it proves nothing about the caller.
 */
export function basicUsername (header: string | undefined): string {
  return parseBasicAuthorization(header)?.username ?? ''
}
