// Talking to a Git provider over HTTP: one exchange with a deadline, isomorphic-git's HTTP client
// on top of it, and the mapping of every failure to the answer the caller gets.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import git, { Errors, type HttpClient } from 'isomorphic-git'
import { STATUS_CODES } from 'node:http'
import { request, type Dispatcher } from 'undici'
import { basicAuthorization } from '../../lib/auth/basic-auth-header.js'
import type { CatalogError } from '../../lib/http/errors.js'
import {
  ProviderAuth, ProviderError, ProviderPackTooLarge, ProviderResponseTooLarge, ProviderTimeout, ProviderUnreachable, RepositoryNotFound
} from '../../lib/git/errors.js'
import { PackTooLarge } from '../../lib/git/protocol/pack-index.js'
import { repoRemoteUrl } from '../../lib/git/paths.js'
import { DEFAULT_TOKEN_USERNAME, type GitProvider } from '../../lib/git/providers.js'
import { GitProtocolError } from '../../lib/git/protocol/receive-pack.js'
import { urlForSpan } from '../../lib/tracing/settings.js'
import packageJson from '../../package.json' with { type: 'json' }

/** The User-Agent of the service's Git requests. */
export const AGENT = `netauto-api/${packageJson.version}`

/** Talking to the provider failed below HTTP: no answer in time, no connection, or an answer too large. */
export class ProviderTransportError extends Error {
  constructor (readonly kind: 'timeout' | 'unreachable' | 'too-large', readonly reason: string) {
    super(`provider ${kind}: ${reason}`)
    this.name = 'ProviderTransportError'
  }
}

export interface Exchange {
  url: string
  method: string
  headers: Record<string, string>
  body?: Buffer
  /**
   * Takes a 200 answer's body as it comes (awaited: it slows the reading), instead of it being held
   * in `data`; any other answer is held, to be reported.
   */
  stream?: (chunk: Buffer) => Promise<void>
}

export interface ExchangeResult {
  statusCode: number
  headers: Record<string, string>
  data: Buffer
}

/** What bounds one exchange: its deadline (body included) and the largest body read. */
export interface ExchangeLimits {
  timeoutMs: number
  maxBytes: number
}

/** A failure of an exchange's `stream`, told apart from the transport's own. */
class StreamFailure extends Error {
  constructor (override readonly cause: unknown) {
    super('the stream of an answer failed')
  }
}

/**
 * The largest answer held in memory (an advertisement, a push report, an error page), whatever
 * GIT_MAX_RESPONSE_BYTES: each exchange in flight may hold this much, so that the memory of
 * concurrent exchanges is bounded by their number (GIT_PROVIDER_CONCURRENCY). A fetched pack is
 * streamed to a file instead, up to GIT_MAX_RESPONSE_BYTES.
 */
export const MAX_HELD_ANSWER_BYTES = 32 * 1024 * 1024

/**
 * One HTTP exchange with a provider, body included, within the limits. The body goes to
 * `req.stream` as it comes when asked, else is read whole; either way never past `maxBytes` (held
 * in memory: past MAX_HELD_ANSWER_BYTES): a longer one is dropped as it comes, with its connection.
 */
export async function exchange (dispatcher: Dispatcher, limits: ExchangeLimits, req: Exchange, tracing?: ExchangeTracing): Promise<ExchangeResult> {
  if (tracing === undefined) return await untracedExchange(dispatcher, limits, req)
  const { tracer, provider } = tracing
  const span = tracer.startSpan(`git ${req.method}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'git.provider': provider, 'http.request.method': req.method, 'url.full': urlForSpan(req.url) }
  })
  const exchangeContext = trace.setSpan(context.active(), span)
  // The provider continues the trace: a copy of the headers, isomorphic-git keeps its own.
  const headers = { ...req.headers }
  propagation.inject(exchangeContext, headers)
  try {
    const result = await untracedExchange(dispatcher, limits, { ...req, headers })
    span.setAttribute('http.response.status_code', result.statusCode)
    if (result.statusCode >= 400) span.setStatus({ code: SpanStatusCode.ERROR })
    return result
  } catch (err) {
    const kind = err instanceof ProviderTransportError ? err.kind : 'stream'
    span.setAttribute('error.type', kind)
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof ProviderTransportError ? err.message : kind })
    throw err
  } finally {
    span.end()
  }
}

/** A provider exchange's span: who the provider is (traces on). */
export interface ExchangeTracing {
  tracer: Tracer
  provider: string
}

async function untracedExchange (dispatcher: Dispatcher, limits: ExchangeLimits, req: Exchange): Promise<ExchangeResult> {
  const { timeoutMs } = limits
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    const response = await request(req.url, {
      method: req.method as Dispatcher.HttpMethod, headers: req.headers, body: req.body, signal, dispatcher
    })
    const stream = response.statusCode === 200 ? req.stream : undefined
    const maxBytes = stream !== undefined ? limits.maxBytes : Math.min(limits.maxBytes, MAX_HELD_ANSWER_BYTES)
    const tooLarge = (): ProviderTransportError => new ProviderTransportError('too-large', `an answer larger than ${maxBytes} bytes`)
    const declared = Number(response.headers['content-length'] ?? 0)
    if (declared > maxBytes) {
      response.body.destroy()
      throw tooLarge()
    }
    const chunks: Buffer[] = []
    let size = 0
    try {
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length
        if (size > maxBytes) throw tooLarge()
        if (stream === undefined) chunks.push(chunk as Buffer)
        else await stream(chunk as Buffer).catch((cause: unknown) => { throw new StreamFailure(cause) })
      }
    } catch (err) {
      response.body.destroy()
      throw err
    }
    if (stream !== undefined) size = 0
    const data = Buffer.concat(chunks, size)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
    }
    return { statusCode: response.statusCode, headers, data }
  } catch (err) {
    if (err instanceof ProviderTransportError) throw err
    // The stream's own refusal (a malformed answer, a failed write) is the caller's to map.
    if (err instanceof StreamFailure) throw err.cause
    if (signal.aborted) throw new ProviderTransportError('timeout', `no answer within ${timeoutMs} ms`)
    const code = (err as { code?: unknown }).code
    throw new ProviderTransportError('unreachable', typeof code === 'string' ? code : (err as Error).name)
  }
}

/** isomorphic-git's HTTP client interface over `exchange`. */
function httpClient (dispatcher: Dispatcher, limits: ExchangeLimits, tracing: ExchangeTracing | undefined): HttpClient {
  return {
    async request ({ url, method = 'GET', headers = {}, body }) {
      let payload: Buffer | undefined
      if (body !== undefined) {
        const chunks: Uint8Array[] = []
        for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk)
        payload = Buffer.concat(chunks)
      }
      const result = await exchange(dispatcher, limits, { url, method, headers, body: payload }, tracing)
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

/** A user's own credentials for a provider (PUT /users/:username/git-credentials/:gitType). */
export interface UserGitCredentials {
  /** The user they belong to, named in messages. */
  owner: string
  /** Sent as the Basic username; the provider's default when absent. */
  username?: string
  token: string
}

/** One repository of a provider as seen over the network, with the credentials sent to it. */
export interface Remote {
  provider: GitProvider
  repoPath: string
  /** Whose credentials go with each request: a user's own, the provider's configured ones, or none. */
  credentials: { kind: 'user', owner: string } | { kind: 'provider' } | { kind: 'none' }
  url: string
  http: HttpClient
  /** An exchange with the provider under its deadline. */
  exchange: (req: Exchange) => Promise<ExchangeResult>
  /** Fresh headers for each call: isomorphic-git adds its own to the object it is given. */
  headers: () => Record<string, string>
  /** Removes the provider's secrets from text that came from outside (server messages, errors). */
  redact: (text: string) => string
}

/** A smart-HTTP service request (RPC) to the repository: a fetch's or a push's POST (`stream`: see Exchange). */
export async function postService (repo: Remote, service: 'git-upload-pack' | 'git-receive-pack', body: Buffer,
  stream?: Exchange['stream']): Promise<ExchangeResult> {
  return await repo.exchange({
    stream,
    url: `${repo.url}/${service}`,
    method: 'POST',
    headers: {
      ...repo.headers(),
      'content-type': `application/x-${service}-request`,
      accept: `application/x-${service}-result`,
      'user-agent': AGENT
    },
    body
  })
}

/**
 * The repository `repoPath` of `provider`, reached with `user`'s own credentials when given, else
 * with the provider's configured ones (else none).
 */
export function openRemote (dispatcher: Dispatcher, options: {
  provider: GitProvider, repoPath: string, maxBytes: number, user?: UserGitCredentials, tracer?: Tracer | null
}): Remote {
  const { provider, repoPath, user } = options
  const secrets: string[] = []
  let authorization: string | undefined
  let credentials: Remote['credentials'] = { kind: 'none' }
  if (user !== undefined) {
    authorization = basicAuthorization(user.username ?? DEFAULT_TOKEN_USERNAME, user.token)
    secrets.push(user.token, authorization.slice('Basic '.length))
    credentials = { kind: 'user', owner: user.owner }
  } else if (provider.token !== undefined) {
    authorization = basicAuthorization(provider.username ?? '', provider.token)
    // The header's encoded credentials are as secret as the token itself.
    secrets.push(provider.token, authorization.slice('Basic '.length))
    credentials = { kind: 'provider' }
  }
  const limits = { timeoutMs: provider.timeoutMs, maxBytes: options.maxBytes }
  const tracing = options.tracer === undefined || options.tracer === null ? undefined : { tracer: options.tracer, provider: provider.name }
  return {
    provider,
    repoPath,
    credentials,
    url: repoRemoteUrl(provider.url, repoPath),
    http: httpClient(dispatcher, limits, tracing),
    exchange: async (req) => await exchange(dispatcher, limits, req, tracing),
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
export function remoteError (repo: Remote, err: unknown): CatalogError | undefined {
  const { name, timeoutMs } = repo.provider
  const { repoPath } = repo
  if (err instanceof ProviderTransportError) {
    if (err.kind === 'timeout') return new ProviderTimeout(name, timeoutMs, repoPath)
    if (err.kind === 'too-large') return new ProviderResponseTooLarge(name, err.reason, repoPath)
    return new ProviderUnreachable(name, err.reason, repoPath)
  }
  if (err instanceof Errors.HttpError) {
    const status = err.data.statusCode
    if (status === 404) return new RepositoryNotFound(repoPath, name)
    if (status === 401 || status === 403) {
      const { credentials } = repo
      if (credentials.kind === 'none') {
        return new ProviderAuth(name, 'asks for credentials', repoPath, 'and none are configured (GIT_PROVIDERS) ' +
          `or stored for the user (PUT /users/:username/git-credentials/${name})`)
      }
      const refused = credentials.kind === 'user' ? `the Git token stored for user ${credentials.owner}` : 'the configured credentials'
      return new ProviderAuth(name, `refused ${refused}`, repoPath, `(HTTP ${status})`)
    }
    return new ProviderError(name, `answered HTTP ${status}`, repoPath)
  }
  if (err instanceof PackTooLarge) return new ProviderPackTooLarge(name, repoPath, err.reason)
  if (err instanceof Errors.SmartHttpError || err instanceof Errors.EmptyServerResponseError ||
      err instanceof Errors.RemoteCapabilityError || err instanceof Errors.UnknownTransportError ||
      err instanceof GitProtocolError) {
    return new ProviderError(name, 'did not answer as a Git smart HTTP server', repoPath)
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

/** What a provider advertises for fetching: each ref's tip, and the default branch (HEAD's target). */
export interface Advertisement {
  /** Tips by full ref name (`refs/heads/main`). */
  tips: ReadonlyMap<string, string>
  /** Branch names, sorted. */
  branches: string[]
  defaultBranch?: string
}

/**
 * Asks the provider for its refs with the credentials of `repo`: the exchange that proves the
 * caller may read the repository (and that it exists) before anything is answered or cached.
 */
export async function advertise (repo: Remote): Promise<Advertisement> {
  const info = await remote(repo, async () => await git.getRemoteInfo2({
    http: repo.http, url: repo.url, headers: repo.headers(), forPush: false, protocolVersion: 1
  }))
  const tips = new Map<string, string>()
  let head: string | undefined
  for (const ref of info.refs ?? []) {
    tips.set(ref.ref, ref.oid)
    if (ref.ref === 'HEAD' && ref.target?.startsWith('refs/heads/') === true) head = ref.target.slice('refs/heads/'.length)
  }
  const branches = [...tips.keys()].filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice('refs/heads/'.length)).sort()
  return { tips, branches, defaultBranch: head !== undefined && tips.has(`refs/heads/${head}`) ? head : undefined }
}
