// The bare cache of each repository under DATA_DIR/git/<provider>/: made and bounded here, kept
// current by incremental fetches, and the object store commits are built in.
import git, { Errors } from 'isomorphic-git'
import fs from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import { branchRef, cacheDirName } from '../../lib/git/paths.js'
import { repoKey } from '../../lib/git/providers.js'
import type { GitObject } from '../../lib/git/protocol/objects.js'
import type { TreeStore } from '../../lib/git/tree.js'
import { describe, remote, type Remote } from './transport.js'
import { fetchInto } from './fetch.js'
import { CacheBudget } from './cache-budget.js'

const REMOTE = 'origin'
const TRACKING_HEAD = `refs/remotes/${REMOTE}/HEAD`
export const trackingRef = (branch: string): string => `refs/remotes/${REMOTE}/${branch}`

/** A cache is rebuilt from one fresh shallow fetch past this many packs (each fetch adds one)... */
export const MAX_CACHE_PACKS = 50
/** ...or this many commits made in it (their loose objects are not collected otherwise). */
export const MAX_CACHE_COMMITS = 1000
const COMMIT_COUNT_FILE = 'netauto-commits'
/** Repositories whose parsed packs stay in memory between requests. */
const MEMORY_CACHED_REPOS = 16

/** A repository of a provider and its cache. */
export interface Repo extends Remote {
  gitdir: string
  /** isomorphic-git's memory of parsed packs; only valid for the cache as it is on disk. */
  cache: object
}

/** Where a commit goes: on `parent`, which the branch is at (or, when not `exists`, it starts from). */
export interface Base {
  /** Undefined in an empty repository: the commit is the first one. */
  parent?: string
  exists: boolean
  /** Read from the provider during this request, not only from the cache. */
  fresh: boolean
}

const exists = async (file: string): Promise<boolean> => await stat(file).then(() => true, () => false)

function isMissingRef (err: unknown, ref: string): boolean {
  return err instanceof Errors.NotFoundError && (err.data as { what?: unknown }).what === ref
}

export interface GitCaches {
  /**
   * The cache of a remote repository (nothing is made on disk until `prepare`): one per repository
   * as the provider names it, so one directory for every spelling a case-insensitive provider accepts.
   */
  open: (remote: Remote) => Repo
  /** Runs `fn` with the cache in use: not evicted meanwhile; the disk budget enforced after. */
  use: <T>(repo: Repo, fn: () => Promise<T>) => Promise<T>
  /** Makes an empty cache, replacing whatever was there. */
  create: (repo: Repo) => Promise<void>
  /** The cache is on disk (with its skeleton): a repository the provider has answered for before. */
  ready: (repo: Repo) => Promise<boolean>
  /** A cache to work in: made when missing or without its skeleton, remade when grown past its bounds. */
  prepare: (repo: Repo, log: FastifyBaseLogger) => Promise<void>
  resolveRef: (repo: Repo, ref: string) => Promise<string | undefined>
  /** The branch as the cache last saw it; not checked against the provider. */
  cachedBase: (repo: Repo, branch: string) => Promise<Base | undefined>
  /** The branch's tip fetched from the provider (or the default branch's when it does not exist). */
  fetchBase: (repo: Repo, branch: string) => Promise<Base>
  trees: (repo: Repo) => TreeStore
  /** Writes objects made in memory (a commit's) to the cache, as loose objects. */
  writeObjects: (repo: Repo, objects: readonly GitObject[]) => Promise<void>
  /**
   * Records a pushed commit, whose objects `written` is writing, as the branch's tip; a failure of
   * either drops the cache (it is rebuilt next time).
   */
  recordPush: (repo: Repo, branch: string, commit: string, written: Promise<void>, log: FastifyBaseLogger) => Promise<void>
}

/** The disk budget of all caches (GIT_CACHE_MAX_BYTES, GIT_CACHE_MAX_REPOSITORIES). */
export interface CacheLimits {
  maxBytes: number
  maxRepositories: number
}

export function gitCaches (dataDir: string, limits: CacheLimits): GitCaches {
  const root = path.resolve(dataDir, 'git')
  const memory = new Map<string, object>()
  const budget = new CacheBudget(root, { ...limits, onEvict: (gitdir) => { memory.delete(gitdir) } })

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

  function open (remote: Remote): Repo {
    const gitdir = path.join(root, remote.provider.name.toLowerCase(), cacheDirName(repoKey(remote.provider, remote.repoPath)))
    return { ...remote, gitdir, cache: memoryCache(gitdir) }
  }

  /** Makes an empty bare cache (in a side directory, renamed into place: never half made). */
  async function create (repo: Repo): Promise<void> {
    memory.delete(repo.gitdir)
    repo.cache = memoryCache(repo.gitdir)
    budget.emptied(repo.gitdir)
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

  async function ready (repo: Repo): Promise<boolean> {
    const skeleton = await Promise.all(['HEAD', 'config', 'objects', 'refs'].map(async (f) => await exists(path.join(repo.gitdir, f))))
    return skeleton.every(Boolean)
  }

  async function prepare (repo: Repo, log: FastifyBaseLogger): Promise<void> {
    if (await ready(repo)) {
      const packs = (await readdir(path.join(repo.gitdir, 'objects', 'pack')).catch(() => [])).filter((f) => f.endsWith('.idx'))
      const commits = await commitCount(repo)
      if (packs.length <= MAX_CACHE_PACKS && commits < MAX_CACHE_COMMITS) return
      log.info({ provider: repo.provider.name, repository: repo.repoPath, packs: packs.length, commits }, 'Git cache rebuilt to bound its size')
    }
    await create(repo)
  }

  async function resolveRef (repo: Repo, ref: string): Promise<string | undefined> {
    try {
      return await git.resolveRef({ fs, gitdir: repo.gitdir, ref })
    } catch (err) {
      if (err instanceof Errors.NotFoundError) return undefined
      throw err
    }
  }

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
    const fetchRef = async (remoteRef: string) => await remote(repo, async () => {
      budget.changed(repo.gitdir)
      return await fetchInto(repo, repo, { remoteRef, have: known, depth: known === undefined ? 1 : undefined })
    })
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

  function trees (repo: Repo): TreeStore {
    return {
      readTree: async (oid) => (await git.readTree({ fs, gitdir: repo.gitdir, oid, cache: repo.cache })).tree,
      writeTree: async (tree) => await git.writeTree({ fs, gitdir: repo.gitdir, tree })
    }
  }

  async function writeObjects (repo: Repo, objects: readonly GitObject[]): Promise<void> {
    budget.wroteLoose(repo.gitdir, objects.map((o) => o.content.length))
    for (const object of objects) {
      await git.writeObject({ fs, gitdir: repo.gitdir, type: object.type, object: object.content, format: 'content' })
    }
  }

  /** The push is done; what follows only keeps the cache current. Its failure is the cache's, not the request's. */
  async function recordPush (repo: Repo, branch: string, commit: string, written: Promise<void>, log: FastifyBaseLogger): Promise<void> {
    try {
      await written
      await git.writeRef({ fs, gitdir: repo.gitdir, ref: trackingRef(branch), value: commit, force: true })
      await writeFile(path.join(repo.gitdir, COMMIT_COUNT_FILE), String(await commitCount(repo) + 1))
    } catch (err) {
      log.warn({ provider: repo.provider.name, repository: repo.repoPath, reason: repo.redact(describe(err)) },
        'Git cache could not record a push; it will be rebuilt')
      memory.delete(repo.gitdir)
      budget.emptied(repo.gitdir)
      await rm(repo.gitdir, { recursive: true, force: true }).catch(() => {})
    }
  }

  const use = async <T>(repo: Repo, fn: () => Promise<T>): Promise<T> => await budget.use(repo.gitdir, fn)

  return { open, use, create, ready, prepare, resolveRef, cachedBase, fetchBase, trees, writeObjects, recordPush }
}
