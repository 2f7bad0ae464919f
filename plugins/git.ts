import fp from 'fastify-plugin'
import { Histogram } from 'prom-client'
import { basicAuthorization } from '../lib/auth/basic-auth-header.js'
import git, { Errors, type HttpClient } from 'isomorphic-git'
import fs from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import path from 'node:path'
import { Agent, request, type Dispatcher } from 'undici'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from './database.js'
import { HttpError } from '../lib/http/errors.js'
import { KeyedMutex } from '../lib/http/keyed-mutex.js'
import { branchRef, cacheDirName, repoRemoteUrl } from '../lib/git/paths.js'
import { findProvider, type GitProvider, type GitProviders } from '../lib/git/providers.js'
import type { GitIdentity } from '../lib/git/commit.js'
import { addFileToTree, type TreeStore } from '../lib/git/tree.js'
import {
  GitProtocolError, ZERO_OID, parseReceivePackResponse, pushCapabilities, receivePackRequest
} from '../lib/git/receive-pack.js'
import packageJson from '../package.json' with { type: 'json' }

// Git projects (spec 4.2): commits built from objects in a bare cache of each repository, pushed
// over smart HTTP. Reading goes through isomorphic-git; the push is ours (see pushCommit).

const REMOTE = 'origin'
const TRACKING_HEAD = `refs/remotes/${REMOTE}/HEAD`
const trackingRef = (branch: string): string => `refs/remotes/${REMOTE}/${branch}`
const AGENT = `netauto-api/${packageJson.version}`

/** Pushes tried for one request when other writers keep moving the branch. */
export const MAX_PUSH_ATTEMPTS = 5
/** A cache is rebuilt from one fresh shallow fetch past this many packs (each fetch adds one)... */
export const MAX_CACHE_PACKS = 50
/** ...or this many commits made in it (their loose objects are not collected otherwise). */
export const MAX_CACHE_COMMITS = 1000
const COMMIT_COUNT_FILE = 'netauto-commits'
/** Repositories whose parsed packs stay in memory between requests. */
const MEMORY_CACHED_REPOS = 16

export interface InitializeProjectInput {
  provider: GitProvider
  /** Checked with lib/git/paths.ts before they get here. */
  repoPath: string
  branch: string
  projectPath: string
  /** The file's content, and the commit's message (ending in a newline) and author. */
  content: string
  message: string
  author: GitIdentity
  log: FastifyBaseLogger
}

export interface InitializeProjectResult {
  commit: string
  /** The branch did not exist: it was created from the default branch (or as the first commit). */
  branchCreated: boolean
  /** Pushes made: more than one when the branch moved meanwhile. */
  attempts: number
  /** The cache was brought up to date from the provider (it was behind, new or rebuilt). */
  fetched: boolean
}

export interface GitService {
  readonly providers: GitProviders
  /** The provider a `gitType` names, case-insensitively. */
  provider: (gitType: string) => GitProvider | undefined
  /** Writes a new file on a branch in one commit; 409 when the path is taken. */
  initializeProject: (input: InitializeProjectInput) => Promise<InitializeProjectResult>
}

declare module 'fastify' {
  interface FastifyInstance {
    git: GitService
  }
}

/** Talking to the provider failed below HTTP: no answer in time, or no connection. */
class ProviderTransportError extends Error {
  constructor (readonly kind: 'timeout' | 'unreachable', readonly reason: string) {
    super(`provider ${kind}: ${reason}`)
    this.name = 'ProviderTransportError'
  }
}

interface Exchange {
  url: string
  method: string
  headers: Record<string, string>
  body?: Buffer
}

interface ExchangeResult {
  statusCode: number
  headers: Record<string, string>
  data: Buffer
}

/** One HTTP exchange with a provider, body included, within `timeoutMs`. */
async function exchange (dispatcher: Dispatcher, timeoutMs: number, req: Exchange): Promise<ExchangeResult> {
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

/** One repository of a provider, and where its cache lives. */
interface Repo {
  provider: GitProvider
  repoPath: string
  url: string
  gitdir: string
  http: HttpClient
  /** isomorphic-git's memory of parsed packs; only valid for the cache as it is on disk. */
  cache: object
  /** Fresh headers for each call: isomorphic-git adds its own to the object it is given. */
  headers: () => Record<string, string>
  /** Removes the provider's secrets from text that came from outside (server messages, errors). */
  redact: (text: string) => string
}

/** Where a commit goes: on `parent`, which the branch is at (or, when not `exists`, it starts from). */
interface Base {
  /** Undefined in an empty repository: the commit is the first one. */
  parent?: string
  exists: boolean
  /** Read from the provider during this request, not only from the cache. */
  fresh: boolean
}

type BuiltCommit = { ok: true, oid: string, objects: string[] } | { ok: false, conflict: string }

const exists = async (file: string): Promise<boolean> => await stat(file).then(() => true, () => false)

function isMissingRef (err: unknown, ref: string): boolean {
  return err instanceof Errors.NotFoundError && (err.data as { what?: unknown }).what === ref
}

function describe (err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code
    return typeof code === 'string' ? `${code}: ${err.message}` : err.message
  }
  return String(err)
}

/** Maps a failure talking to the provider to the answer; undefined for anything local. */
function remoteError (repo: Repo, err: unknown): HttpError | undefined {
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
async function remote<T> (repo: Repo, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    throw remoteError(repo, err) ?? err
  }
}

function gitService (options: { db: Db, dataDir: string, providers: GitProviders }): GitService & { close: () => Promise<void> } {
  const { db, providers } = options
  const root = path.resolve(options.dataDir, 'git')
  const dispatcher = new Agent()
  // Serialises all work on one cache in this process; the advisory lock serialises instances.
  const cacheLocks = new KeyedMutex()
  const memory = new Map<string, object>()

  function memoryCache (gitdir: string): object {
    const cached = memory.get(gitdir) ?? {}
    memory.delete(gitdir)
    memory.set(gitdir, cached)
    for (const key of memory.keys()) {
      if (memory.size <= MEMORY_CACHED_REPOS) break
      memory.delete(key)
    }
    return cached
  }

  function openRepo (provider: GitProvider, repoPath: string): Repo {
    const gitdir = path.join(root, provider.name.toLowerCase(), cacheDirName(repoPath))
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
      gitdir,
      http: httpClient(dispatcher, provider.timeoutMs),
      cache: memoryCache(gitdir),
      // Sent up front: saves the 401 round trip isomorphic-git's onAuth would cost.
      headers: (): Record<string, string> => authorization === undefined ? {} : { Authorization: authorization },
      redact: (text) => secrets.reduce((t, secret) => t.split(secret).join('[redacted]'), text)
    }
  }

  /** Makes an empty bare cache (in a side directory, renamed into place: never half made). */
  async function createCache (repo: Repo): Promise<void> {
    memory.delete(repo.gitdir)
    repo.cache = memoryCache(repo.gitdir)
    await rm(repo.gitdir, { recursive: true, force: true })
    await mkdir(path.dirname(repo.gitdir), { recursive: true })
    const side = `${repo.gitdir}.${randomBytes(6).toString('hex')}.tmp`
    try {
      await git.init({ fs, dir: side, bare: true, defaultBranch: 'main' })
      await git.addRemote({ fs, gitdir: side, remote: REMOTE, url: repo.url })
      await rename(side, repo.gitdir)
    } finally {
      await rm(side, { recursive: true, force: true })
    }
  }

  async function commitCount (repo: Repo): Promise<number> {
    const text = await readFile(path.join(repo.gitdir, COMMIT_COUNT_FILE), 'utf8').catch(() => '0')
    return Number.parseInt(text, 10) || 0
  }

  /** A cache to work in: made when missing or without its skeleton, remade when grown past its bounds. */
  async function prepareCache (repo: Repo, log: FastifyBaseLogger): Promise<void> {
    const skeleton = await Promise.all(['HEAD', 'config', 'objects', 'refs'].map(async (f) => await exists(path.join(repo.gitdir, f))))
    if (skeleton.every(Boolean)) {
      const packs = (await readdir(path.join(repo.gitdir, 'objects', 'pack')).catch(() => [])).filter((f) => f.endsWith('.idx'))
      const commits = await commitCount(repo)
      if (packs.length <= MAX_CACHE_PACKS && commits < MAX_CACHE_COMMITS) return
      log.info({ provider: repo.provider.name, repository: repo.repoPath, packs: packs.length, commits }, 'Git cache rebuilt to bound its size')
    }
    await createCache(repo)
  }

  async function resolveRef (repo: Repo, ref: string): Promise<string | undefined> {
    try {
      return await git.resolveRef({ fs, gitdir: repo.gitdir, ref })
    } catch (err) {
      if (err instanceof Errors.NotFoundError) return undefined
      throw err
    }
  }

  /** The branch as the cache last saw it; not checked against the provider (the push is). */
  async function cachedBase (repo: Repo, branch: string): Promise<Base | undefined> {
    const parent = await resolveRef(repo, trackingRef(branch))
    return parent === undefined ? undefined : { parent, exists: true, fresh: false }
  }

  /**
   * Fetches the branch's tip, or the default branch's when the branch does not exist. With a tip
   * in the cache to say "have", only what is new comes; a cache without one asks for depth 1
   * (a depth on later fetches would make the server send the whole tree again).
   */
  async function fetchBase (repo: Repo, branch: string): Promise<Base> {
    const known = await resolveRef(repo, trackingRef(branch)) !== undefined
      ? trackingRef(branch)
      : await resolveRef(repo, TRACKING_HEAD) !== undefined ? TRACKING_HEAD : undefined
    const fetchRef = async (remoteRef: string) => await remote(repo, async () => await git.fetch({
      fs,
      http: repo.http,
      gitdir: repo.gitdir,
      url: repo.url,
      remote: REMOTE,
      // `ref` is what isomorphic-git offers as "have"; `remoteRef` what it asks for.
      ref: known ?? trackingRef(branch),
      remoteRef,
      singleBranch: true,
      tags: false,
      depth: known === undefined ? 1 : undefined,
      headers: repo.headers(),
      cache: repo.cache
    }))
    try {
      const { fetchHead } = await fetchRef(branchRef(branch))
      // No refs at all: an empty repository, where the branch starts with the first commit.
      return fetchHead === null ? { exists: false, fresh: true } : { parent: fetchHead, exists: true, fresh: true }
    } catch (err) {
      if (!isMissingRef(err, branchRef(branch))) throw err
    }
    try {
      const { fetchHead } = await fetchRef('HEAD')
      return { parent: fetchHead ?? undefined, exists: false, fresh: true }
    } catch (err) {
      if (isMissingRef(err, 'HEAD')) return { exists: false, fresh: true }
      throw err
    }
  }

  function treeStore (repo: Repo): TreeStore {
    return {
      readTree: async (oid) => (await git.readTree({ fs, gitdir: repo.gitdir, oid, cache: repo.cache })).tree,
      writeTree: async (tree) => await git.writeTree({ fs, gitdir: repo.gitdir, tree })
    }
  }

  /** The commit adding the file on `base`, from objects: only the trees on the path are touched. */
  async function buildCommit (repo: Repo, base: Base, blob: string, input: InitializeProjectInput): Promise<BuiltCommit> {
    const rootTree = base.parent === undefined
      ? undefined
      : (await git.readCommit({ fs, gitdir: repo.gitdir, oid: base.parent, cache: repo.cache })).commit.tree
    const added = await addFileToTree(treeStore(repo), rootTree, input.projectPath, blob)
    if (!added.ok) return added
    const oid = await git.writeCommit({
      fs,
      gitdir: repo.gitdir,
      commit: {
        message: input.message,
        tree: added.tree,
        parent: base.parent === undefined ? [] : [base.parent],
        author: input.author,
        committer: input.author
      }
    })
    return { ok: true, oid, objects: [...new Set([blob, ...added.written, oid])] }
  }

  /** What the provider says about its branches before a push: their tips and its capabilities. */
  async function discoverPush (repo: Repo): Promise<{ tip: (ref: string) => string, capabilities: Record<string, string | true> }> {
    const info = await remote(repo, async () => await git.getRemoteInfo2({
      http: repo.http, url: repo.url, headers: repo.headers(), forPush: true, protocolVersion: 1
    }))
    return { tip: (ref) => info.refs?.find((r) => r.ref === ref)?.oid ?? ZERO_OID, capabilities: info.capabilities }
  }

  /**
   * Pushes `commit` to the branch if the branch is still where `base` says, sending exactly the
   * objects the commit added. (isomorphic-git's push walks the whole tree of the commit and of its
   * parent to work that out: a cost that grows with the repository.) The server applies the update
   * only if the branch is still at the old value given, so a race with another writer cannot lose
   * a commit. Returns false when the branch moved; throws when the provider refuses the push.
   */
  async function pushCommit (repo: Repo, branch: string, base: Base, commit: string, objects: string[]): Promise<boolean> {
    const ref = branchRef(branch)
    const expected = base.exists && base.parent !== undefined ? base.parent : ZERO_OID
    const before = await discoverPush(repo)
    if (before.tip(ref) !== expected) return false

    const { packfile } = await git.packObjects({ fs, gitdir: repo.gitdir, oids: objects, cache: repo.cache })
    const capabilities = pushCapabilities(before.capabilities, AGENT)
    const result = await remote(repo, async () => await exchange(dispatcher, repo.provider.timeoutMs, {
      url: `${repo.url}/git-receive-pack`,
      method: 'POST',
      headers: {
        ...repo.headers(),
        'content-type': 'application/x-git-receive-pack-request',
        accept: 'application/x-git-receive-pack-result',
        'user-agent': AGENT
      },
      body: receivePackRequest({ oldOid: expected, newOid: commit, ref }, capabilities, packfile ?? new Uint8Array())
    }))
    if (result.statusCode !== 200) {
      throw remoteError(repo, new Errors.HttpError(result.statusCode, STATUS_CODES[result.statusCode] ?? '', '')) as HttpError
    }
    const report = await remote(repo, async () => parseReceivePackResponse(result.data, capabilities.includes('side-band-64k')))
    const status = report.refs.get(ref)
    if (report.unpack === 'ok' && status?.ok === true) return true
    if ((await discoverPush(repo)).tip(ref) !== expected) return false
    const reason = report.unpack !== 'ok' ? `unpack ${report.unpack}` : status?.reason ?? 'no status for the branch'
    const said = report.messages.length > 0 ? ` (${report.messages.join(' | ')})` : ''
    throw new HttpError(502, repo.redact(
      `Git provider ${repo.provider.name} refused the push to branch ${branch} of repository ${repo.repoPath}: ${reason}${said}`
    ).slice(0, 2000), { code: 'GIT_PUSH_REFUSED' })
  }

  /** The push is done; what follows only keeps the cache current. Its failure is the cache's, not the request's. */
  async function recordPush (repo: Repo, branch: string, commit: string, log: FastifyBaseLogger): Promise<void> {
    try {
      await git.writeRef({ fs, gitdir: repo.gitdir, ref: trackingRef(branch), value: commit, force: true })
      await writeFile(path.join(repo.gitdir, COMMIT_COUNT_FILE), String(await commitCount(repo) + 1))
    } catch (err) {
      log.warn({ provider: repo.provider.name, repository: repo.repoPath, reason: repo.redact(describe(err)) },
        'Git cache could not record a push; it will be rebuilt')
      memory.delete(repo.gitdir)
      await rm(repo.gitdir, { recursive: true, force: true }).catch(() => {})
    }
  }

  async function initializeInCache (repo: Repo, input: InitializeProjectInput): Promise<InitializeProjectResult> {
    const { branch } = input
    await prepareCache(repo, input.log)
    const blob = await git.writeBlob({ fs, gitdir: repo.gitdir, blob: Buffer.from(input.content, 'utf8') })
    let fetched = false
    const fetchFresh = async (): Promise<Base> => {
      fetched = true
      return await fetchBase(repo, branch)
    }
    let base = await cachedBase(repo, branch)
    for (let attempt = 1; attempt <= MAX_PUSH_ATTEMPTS; attempt++) {
      base ??= await fetchFresh()
      let built = await buildCommit(repo, base, blob, input)
      if (!built.ok && !base.fresh) {
        // The cache may be behind the provider: only the provider's current tip can say "taken".
        base = await fetchFresh()
        built = await buildCommit(repo, base, blob, input)
      }
      if (!built.ok) {
        throw new HttpError(409, `${built.conflict} on branch ${branch} of repository ${repo.repoPath}`, { code: 'GIT_PROJECT_EXISTS' })
      }
      if (await pushCommit(repo, branch, base, built.oid, built.objects)) {
        await recordPush(repo, branch, built.oid, input.log)
        return { commit: built.oid, branchCreated: !base.exists, attempts: attempt, fetched }
      }
      base = undefined // the branch moved: fetch its new tip and make the commit again there
    }
    throw new HttpError(503, `Branch ${branch} of repository ${repo.repoPath} kept moving during ${MAX_PUSH_ATTEMPTS} pushes; try again`,
      { code: 'GIT_BRANCH_BUSY' })
  }

  async function initializeProject (input: InitializeProjectInput): Promise<InitializeProjectResult> {
    const repo = openRepo(input.provider, input.repoPath)
    const lock = `git:${input.provider.name.toLowerCase()}:${input.repoPath}:${input.branch}`
    return await cacheLocks.run(repo.gitdir, async () => await db.withAdvisoryLock(lock, async () => {
      try {
        return await initializeInCache(repo, input)
      } catch (err) {
        if (err instanceof HttpError) throw err
        // Anything else failed on the local cache (interrupted write, damaged objects): start
        // it again from the provider, once.
        input.log.warn({ provider: repo.provider.name, repository: repo.repoPath, reason: repo.redact(describe(err)) },
          'Git cache unusable; rebuilding it from the provider')
        await createCache(repo)
        return await initializeInCache(repo, input)
      }
    }))
  }

  return {
    providers,
    provider: (gitType) => findProvider(providers, gitType),
    initializeProject,
    close: async () => { await dispatcher.close() }
  }
}

/** `fastify.git`: providers, the clone cache under DATA_DIR/git, and the locks around pushes. */
export default fp(async (fastify) => {
  const service = gitService({ db: fastify.db, dataDir: fastify.config.DATA_DIR, providers: fastify.config.gitProviders })
  const durations = new Histogram({
    name: 'git_operation_duration_seconds',
    help: 'Duration of Git project initializations (lock wait, fetch, commit and push), by provider and outcome',
    labelNames: ['provider', 'operation', 'outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [fastify.metricsRegistry]
  })
  const initializeProject = service.initializeProject
  service.initializeProject = async (input) => {
    const end = durations.startTimer({ provider: input.provider.name, operation: 'initialize_project' })
    try {
      const result = await initializeProject(input)
      end({ outcome: 'ok' })
      return result
    } catch (err) {
      end({ outcome: String((err as { statusCode?: number }).statusCode ?? 500) })
      throw err
    }
  }
  fastify.decorate('git', service)
  fastify.addHook('onClose', async () => { await service.close() })
}, { name: 'git', dependencies: ['config', 'database', 'metrics'] })
