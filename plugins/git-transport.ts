// Talking to a Git provider over HTTP: one exchange with a deadline, isomorphic-git's HTTP client
// on top of it, and the mapping of every failure to the answer the caller gets.
import { Errors, type HttpClient } from 'isomorphic-git'
import { STATUS_CODES } from 'node:http'
import { request, type Dispatcher } from 'undici'
import { basicAuthorization } from '../lib/auth/basic-auth-header.js'
import { HttpError } from '../lib/http/errors.js'
import { repoRemoteUrl } from '../lib/git/paths.js'
import type { GitProvider } from '../lib/git/providers.js'
import { GitProtocolError } from '../lib/git/receive-pack.js'
import packageJson from '../package.json' with { type: 'json' }

/** The User-Agent of the service's Git requests. */
export const AGENT = `netauto-api/${packageJson.version}`

/** Talking to the provider failed below HTTP: no answer in time, or no connection. */
export class ProviderTransportError extends Error {
  constructor (readonly kind: 'timeout' | 'unreachable', readonly reason: string) {
    super(`provider ${kind}: ${reason}`)
    this.name = 'ProviderTransportError'
  }
}

export interface Exchange {
  url: string
  method: string
  headers: Record<string, string>
  body?: Buffer
}

export interface ExchangeResult {
  statusCode: number
  headers: Record<string, string>
  data: Buffer
}

/** One HTTP exchange with a provider, body included, within `timeoutMs`. */
export async function exchange (dispatcher: Dispatcher, timeoutMs: number, req: Exchange): Promise<ExchangeResult> {
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    const response = await request(req.url, {
      method: req.method as Dispatcher.HttpMethod, headers: req.headers, body: req.body, signal, dispatcher
    })
    // Read whole: isomorphic-git holds a fetched pack in memory anyway, and a body left half-read
    // would keep the connection from being reused.
    const data = Buffer.from(await response.body.arrayBuffer())
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
    }
    return { statusCode: response.statusCode, headers, data }
  } catch (err) {
    if (signal.aborted) throw new ProviderTransportError('timeout', `no answer within ${timeoutMs} ms`)
    const code = (err as { code?: unknown }).code
    throw new ProviderTransportError('unreachable', typeof code === 'string' ? code : (err as Error).name)
  }
}

/** isomorphic-git's HTTP client interface over `exchange`. */
function httpClient (dispatcher: Dispatcher, timeoutMs: number): HttpClient {
  return {
    async request ({ url, method = 'GET', headers = {}, body }) {
      let payload: Buffer | undefined
      if (body !== undefined) {
        const chunks: Uint8Array[] = []
        for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk)
        payload = Buffer.concat(chunks)
      }
      const result = await exchange(dispatcher, timeoutMs, { url, method, headers, body: payload })
      return {
        url,
        method,
        statusCode: result.statusCode,
        statusMessage: STATUS_CODES[result.statusCode] ?? '',
        headers: result.headers,
        body: (async function * () { yield new Uint8Array(result.data) })()
      }
    }
  }
}

/** One repository of a provider as seen over the network, with the credentials sent to it. */
export interface Remote {
  provider: GitProvider
  repoPath: string
  url: string
  http: HttpClient
  /** An exchange with the provider under its deadline. */
  exchange: (req: Exchange) => Promise<ExchangeResult>
  /** Fresh headers for each call: isomorphic-git adds its own to the object it is given. */
  headers: () => Record<string, string>
  /** Removes the provider's secrets from text that came from outside (server messages, errors). */
  redact: (text: string) => string
}

export function openRemote (dispatcher: Dispatcher, provider: GitProvider, repoPath: string): Remote {
  const secrets: string[] = []
  let authorization: string | undefined
  if (provider.token !== undefined) {
    authorization = basicAuthorization(provider.username ?? '', provider.token)
    // The header's encoded credentials are as secret as the token itself.
    secrets.push(provider.token, authorization.slice('Basic '.length))
  }
  return {
    provider,
    repoPath,
    url: repoRemoteUrl(provider.url, repoPath),
    http: httpClient(dispatcher, provider.timeoutMs),
    exchange: async (req) => await exchange(dispatcher, provider.timeoutMs, req),
    // Sent up front: saves the 401 round trip isomorphic-git's onAuth would cost.
    headers: (): Record<string, string> => authorization === undefined ? {} : { Authorization: authorization },
    redact: (text) => secrets.reduce((t, secret) => t.split(secret).join('[redacted]'), text)
  }
}

export function describe (err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code
    return typeof code === 'string' ? `${code}: ${err.message}` : err.message
  }
  return String(err)
}

/** Maps a failure talking to the provider to the answer; undefined for anything local. */
export function remoteError (repo: Remote, err: unknown): HttpError | undefined {
  const { name, timeoutMs, token } = repo.provider
  const repository = `repository ${repo.repoPath}`
  if (err instanceof ProviderTransportError) {
    return err.kind === 'timeout'
      ? new HttpError(504, `Git provider ${name} did not answer within ${timeoutMs} ms for ${repository}`, { code: 'GIT_PROVIDER_TIMEOUT' })
      : new HttpError(502, `Git provider ${name} is unreachable (${err.reason}) for ${repository}`, { code: 'GIT_PROVIDER_UNREACHABLE' })
  }
  if (err instanceof Errors.HttpError) {
    const status = err.data.statusCode
    if (status === 404) {
      return new HttpError(404, `Repository ${repo.repoPath} not found on Git provider ${name}`, { code: 'GIT_REPOSITORY_NOT_FOUND' })
    }
    if (status === 401 || status === 403) {
      const message = token === undefined
        ? `Git provider ${name} asks for credentials for ${repository} and none are configured (GIT_PROVIDERS)`
        : `Git provider ${name} refused the configured credentials for ${repository} (HTTP ${status})`
      return new HttpError(502, message, { code: 'GIT_PROVIDER_AUTH' })
    }
    return new HttpError(502, `Git provider ${name} answered HTTP ${status} for ${repository}`, { code: 'GIT_PROVIDER_ERROR' })
  }
  if (err instanceof Errors.SmartHttpError || err instanceof Errors.EmptyServerResponseError ||
      err instanceof Errors.RemoteCapabilityError || err instanceof Errors.UnknownTransportError ||
      err instanceof GitProtocolError) {
    return new HttpError(502, `Git provider ${name} did not answer as a Git smart HTTP server for ${repository}`, { code: 'GIT_PROVIDER_ERROR' })
  }
  return undefined
}

/** Runs a call to the provider; its failures become the answers of remoteError. */
export async function remote<T> (repo: Remote, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    throw remoteError(repo, err) ?? err
  }
}
