// The Git providers the service pushes to: GitHub and GitLab by default, more (or credentials for
// these) from GIT_PROVIDERS. Pure: parsed and checked once when the configuration is loaded.
import type { CheckResult } from '../http/check-result.js'

export interface GitProvider {
  /** Name as configured, e.g. `GitHub`; `gitType` matches it case-insensitively. */
  readonly name: string
  /** Base URL without a trailing '/'; a repository is `<url>/<repoPath>.git`. */
  readonly url: string
  /** Basic credentials sent to the provider, when a token is configured. */
  readonly username?: string
  readonly token?: string
  /** Deadline of each HTTP exchange with the provider, body included. */
  readonly timeoutMs: number
  /**
   * The provider tells repository paths apart by case (a plain Git server on a case-sensitive
   * filesystem). Absent: it does not, as GitHub, GitLab, Gitea and Bitbucket do not.
   */
  readonly caseSensitive?: true
}

/** Providers by lower-cased name. */
export type GitProviders = ReadonlyMap<string, GitProvider>

export const DEFAULT_TIMEOUT_MS = 60_000
export const MIN_TIMEOUT_MS = 100
export const MAX_TIMEOUT_MS = 600_000
/** Username sent with a token when none is configured: what GitHub expects, and GitLab accepts. */
export const DEFAULT_TOKEN_USERNAME = 'x-access-token'

// Public hosts: usable for public repositories without configuration (pushing needs a token).
const DEFAULTS: Record<string, { url: string }> = {
  GitHub: { url: 'https://github.com' },
  GitLab: { url: 'https://gitlab.com' }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const CONTROL = /[\u0000-\u001f\u007f]/
const FIELDS = new Set(['url', 'username', 'token', 'timeoutMs', 'caseSensitive'])

function fail<T> (reason: string): CheckResult<T> {
  return { ok: false, reason: `GIT_PROVIDERS ${reason}` }
}

// Messages name the provider and the field, never a value: a value may be (or contain) a secret.
function checkProvider (name: string, input: unknown): CheckResult<GitProvider> {
  const where = `provider "${name}"`
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return fail(`${where} must be an object with "url" and optionally "username", "token", "timeoutMs", "caseSensitive"`)
  }
  const entry = input as Record<string, unknown>
  const unknown = Object.keys(entry).find((key) => !FIELDS.has(key))
  if (unknown !== undefined) return fail(`${where} has an unknown field "${unknown}"`)

  if (typeof entry.url !== 'string') return fail(`${where} needs "url" (a string)`)
  let url: URL
  try {
    url = new URL(entry.url)
  } catch {
    return fail(`${where}: "url" is not a valid URL`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return fail(`${where}: "url" must be http or https`)
  if (url.username !== '' || url.password !== '') {
    return fail(`${where}: "url" must not contain credentials; set "username" and "token" instead`)
  }
  if (url.search !== '' || url.hash !== '' || entry.url.includes('?') || entry.url.includes('#')) {
    return fail(`${where}: "url" must not have a query or fragment`)
  }

  const { username, token, timeoutMs, caseSensitive } = entry
  if (caseSensitive !== undefined && typeof caseSensitive !== 'boolean') return fail(`${where}: "caseSensitive" must be true or false`)
  if (username !== undefined && (typeof username !== 'string' || username === '' || username.includes(':') || CONTROL.test(username))) {
    return fail(`${where}: "username" must be a non-empty string without ':' or control characters`)
  }
  if (token !== undefined && (typeof token !== 'string' || token === '' || CONTROL.test(token))) {
    return fail(`${where}: "token" must be a non-empty string without control characters`)
  }
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || (timeoutMs as number) < MIN_TIMEOUT_MS || (timeoutMs as number) > MAX_TIMEOUT_MS)) {
    return fail(`${where}: "timeoutMs" must be an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}`)
  }
  return {
    ok: true,
    value: {
      name,
      url: url.href.replace(/\/+$/, ''),
      ...(token === undefined ? {} : { username: (username as string | undefined) ?? DEFAULT_TOKEN_USERNAME, token: token as string }),
      timeoutMs: (timeoutMs as number | undefined) ?? DEFAULT_TIMEOUT_MS,
      ...(caseSensitive === true ? { caseSensitive } : {})
    }
  }
}

/**
 * Parses GIT_PROVIDERS (a JSON object of name -> {url, username?, token?, timeoutMs?, caseSensitive?}) over the
 * defaults. A configured name replaces the default of the same name, compared case-insensitively.
 */
export function parseGitProviders (json: string | undefined): CheckResult<GitProviders> {
  const providers = new Map<string, GitProvider>()
  for (const [name, entry] of Object.entries(DEFAULTS)) {
    providers.set(name.toLowerCase(), { name, url: entry.url, timeoutMs: DEFAULT_TIMEOUT_MS })
  }
  if (json === undefined) return { ok: true, value: providers }

  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    // JSON.parse quotes part of its input in its message, and that part may hold a token.
    return fail('is not valid JSON')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail('must be a JSON object mapping provider names to {"url", "username", "token"}')
  }
  const seen = new Set<string>()
  for (const [name, entry] of Object.entries(parsed)) {
    if (!NAME.test(name)) {
      return fail(`provider names must be 1-64 letters, digits, '.', '_' or '-' (got "${name.slice(0, 64)}")`)
    }
    const key = name.toLowerCase()
    if (seen.has(key)) return fail(`names provider "${name}" twice (names are case-insensitive)`)
    seen.add(key)
    const provider = checkProvider(name, entry)
    if (!provider.ok) return provider
    providers.set(key, provider.value)
  }
  return { ok: true, value: providers }
}

/**
 * A repository as the provider tells repositories apart: its path lower-cased unless the provider
 * is case-sensitive (repository paths are ASCII), so that every spelling it accepts of one
 * repository shares one cache and one lock.
 */
export function repoKey (provider: GitProvider, repoPath: string): string {
  return provider.caseSensitive === true ? repoPath : repoPath.toLowerCase()
}

/** The provider a `gitType` names, case-insensitively. */
export function findProvider (providers: GitProviders, gitType: string): GitProvider | undefined {
  return providers.get(gitType.toLowerCase())
}
