/** The value of a Basic Authorization header for these credentials (RFC 7617, UTF-8). */
export function basicAuthorization (username: string, password: string): string {
  return 'Basic ' + Buffer.from(`${username}:${password}`, 'utf8').toString('base64')
}

// The grammar @fastify/basic-auth accepts with `strictCredentials: false` and UTF-8: optional
// blanks around the scheme and a token68 (RFC 7235 2.1), credentials without control characters
// (RFC 7617 2). Requests are authenticated by the plugin; this reads the same headers where no
// request is at hand (re-checking a remembered credential) or where the answer is not the
// plugin's (the OAuth token endpoint's client_secret_basic).
const BASIC = /^[ \t]*basic[ \t]+([\w.~+/-]+=*)[ \t]*$/i
const CONTROL = /[\x00-\x1F\x7F]/

/** The credentials in a Basic Authorization header, or undefined when it is absent or malformed. */
export function parseBasicAuthorization (header: string | undefined): { username: string, password: string } | undefined {
  const match = BASIC.exec(header ?? '')
  if (match?.[1] === undefined) return undefined
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0 || CONTROL.test(decoded)) return undefined
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}
