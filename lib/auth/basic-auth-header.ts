/**
 * The value of a Basic Authorization header for these credentials (RFC 7617, UTF-8), as this
 * service sends them to other services. Headers it receives are read by @fastify/basic-auth
 * alone (see plugins/auth/credentials.ts).
 */
export function basicAuthorization (username: string, password: string): string {
  return 'Basic ' + Buffer.from(`${username}:${password}`, 'utf8').toString('base64')
}
