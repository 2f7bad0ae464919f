// Project files (spec 4.2 and the platform's other project calls): read, created and replaced, in
// the repository's cache under the lock of their branch. A write is one commit (commits.ts) pushed
// with our receive-pack push.
import { Errors } from 'isomorphic-git'
import type { Tracer } from '@opentelemetry/api'
import type { Dispatcher } from 'undici'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../database/index.js'
import { HttpError, type CatalogError } from '../../lib/http/errors.js'
import { KeyedMutex } from '../../lib/http/keyed-mutex.js'
import { BranchNotFound, ProjectChanged, ProjectExists, ProjectNotFound, ProjectTooLarge, ProviderTreeRefused } from '../../lib/git/errors.js'
import { repoKey, type GitProvider } from '../../lib/git/providers.js'
import type { GitIdentity } from '../../lib/git/commit.js'
import { branchRef } from '../../lib/git/paths.js'
import { gitObject } from '../../lib/git/protocol/objects.js'
import { findInTree } from '../../lib/git/tree.js'
import { BlobTooLarge, blobReader } from './blobs.js'
import { trackingRef, type GitCaches, type Repo } from './cache.js'
import { projectCommits, rootTree, type Attempt } from './commits.js'
import type { PushCapabilities } from './push.js'
import { advertise, describe, openRemote, type UserGitCredentials } from './transport.js'

/** The advisory lock that serialises writes to one branch of a repository across instances. */
export const lockName = (target: GitTarget, branch: string): string =>
  `git:${target.provider.name.toLowerCase()}:${repoKey(target.provider, target.repoPath)}:${branch}`

/** A repository of a provider, reached with the caller's own token when they stored one. */
export interface GitTarget {
  provider: GitProvider
  /** Checked with lib/git/paths.ts before they get here, as are branch names and project paths. */
  repoPath: string
  user?: UserGitCredentials
  log: FastifyBaseLogger
}

export interface InitializeProjectInput extends GitTarget {
  branch: string
  projectPath: string
  /** The file's content, and the commit's message (ending in a newline) and author. */
  content: string
  message: string
  author: GitIdentity
}

export interface InitializeProjectResult {
  commit: string
  /** The blob id of the file written (its ETag). */
  blob: string
  /** The branch did not exist: it was created from the default branch (or as the first commit). */
  branchCreated: boolean
  /** Pushes made: more than one when the branch moved meanwhile. */
  attempts: number
  /** The cache was brought up to date from the provider (it was behind, new or rebuilt). */
  fetched: boolean
}

export interface UpdateProjectInput extends InitializeProjectInput {
  /** Blob ids the file must hold for the update to apply (If-Match); undefined: unconditional. */
  ifMatch?: string[]
}

export interface UpdateProjectResult {
  /** The commit pushed; undefined when the file already held the content (nothing committed). */
  commit?: string
  blob: string
  /** The blob the file held before. */
  previous: string
  attempts: number
  fetched: boolean
}

export interface ReadProjectInput extends GitTarget {
  branch: string
  projectPath: string
}

export interface ReadProjectResult {
  content: Buffer
  blob: string
  /** The commit read: the branch's tip as the provider advertised it during this request. */
  commit: string
  fetched: boolean
}

export interface GitProjects {
  initializeProject: (input: InitializeProjectInput) => Promise<InitializeProjectResult>
  updateProject: (input: UpdateProjectInput) => Promise<UpdateProjectResult>
  readProject: (input: ReadProjectInput) => Promise<ReadProjectResult>
}

/**
 * A tree the provider sent that isomorphic-git refuses to read (a path such as `.git` or `GIT~1`,
 * or a damaged entry): the branch holds it, so rebuilding the cache would not help.
 */
function treeRefused (repo: Repo, err: unknown): CatalogError | undefined {
  const unsafe = err instanceof Errors.UnsafeFilepathError
  if (!unsafe && !(err instanceof Errors.InternalError && err.message.includes('GitTree'))) return undefined
  const detail = unsafe ? `a path Git refuses (${JSON.stringify(String((err.data as { filepath?: unknown }).filepath ?? '')).slice(0, 200)})` : 'a malformed tree'
  return new ProviderTreeRefused(repo.provider.name, detail, repo.repoPath)
}

export function gitProjects (options: {
  db: Db
  caches: GitCaches
  pushCapabilities: PushCapabilities
  dispatcher: Dispatcher
  maxResponseBytes: number
  /** GIT_PROJECT_MAX_BYTES: a larger project file is refused before it is inflated. */
  projectMaxBytes: number
  tracer?: Tracer | null
}): GitProjects {
  const { db, caches, dispatcher } = options
  const commits = projectCommits(options)
  // Serialises all work on one cache in this process; the advisory lock serialises instances.
  const cacheLocks = new KeyedMutex()

  function openRepo (target: GitTarget): Repo {
    return caches.open(openRemote(dispatcher, { provider: target.provider, repoPath: target.repoPath, maxBytes: options.maxResponseBytes, user: target.user, tracer: options.tracer }))
  }

  /**
   * Runs `fn` on the repository's cache under its locks (the branch's advisory lock too when
   * `branch` is given). A cache is only made once the provider has answered for the repository
   * (`answered`: it did during this request already).
   * A local failure (interrupted write, damaged objects) rebuilds the cache from the provider, once.
   */
  async function inCache<T> (repo: Repo, target: GitTarget, branch: string | undefined, fn: () => Promise<T>, answered = false): Promise<T> {
    const work = async (): Promise<T> => {
      if (!answered && !(await caches.ready(repo))) await advertise(repo)
      try {
        return await fn()
      } catch (err) {
        if (err instanceof HttpError) throw err
        const refused = treeRefused(repo, err)
        if (refused !== undefined) throw refused
        target.log.warn({ provider: repo.provider.name, repository: repo.repoPath, reason: repo.redact(describe(err)) },
          'Git cache unusable; rebuilding it from the provider')
        await caches.create(repo)
        try {
          return await fn()
        } catch (again) {
          throw treeRefused(repo, again) ?? again
        }
      }
    }
    // In use from the moment it waits for its lock: never evicted under a request.
    return await caches.use(repo, async () => await cacheLocks.run(repo.gitdir, async () =>
      branch === undefined ? await work() : await db.withAdvisoryLock(lockName(target, branch), work)))
  }

  async function initializeInCache (repo: Repo, input: InitializeProjectInput): Promise<InitializeProjectResult> {
    const { branch } = input
    await caches.prepare(repo, input.log)
    const blob = gitObject('blob', Buffer.from(input.content, 'utf8'))
    return await commits.pushOnTip(repo, branch, input.log, async (base): Promise<Attempt<InitializeProjectResult>> => {
      const built = await commits.addition(repo, base, blob, input)
      if (!built.ok) return { answer: () => { throw new ProjectExists(built.conflict, branch, repo.repoPath) } }
      return {
        push: built.oid,
        objects: built.objects,
        answer: (attempts, fetched) => ({ commit: built.oid, blob: blob.oid, branchCreated: !base.exists, attempts, fetched })
      }
    })
  }

  async function updateInCache (repo: Repo, input: UpdateProjectInput): Promise<UpdateProjectResult> {
    const { branch } = input
    await caches.prepare(repo, input.log)
    const blob = gitObject('blob', Buffer.from(input.content, 'utf8'))
    return await commits.pushOnTip(repo, branch, input.log, async (base): Promise<Attempt<UpdateProjectResult>> => {
      const outcome = await commits.replacement(repo, base, blob, input)
      switch (outcome.kind) {
        case 'no-branch':
          return { answer: () => { throw new BranchNotFound(branch, repo.repoPath) } }
        case 'missing':
          return { answer: () => { throw new ProjectNotFound(outcome.missing, branch, repo.repoPath, '; initialize it first (POST)') } }
        case 'stale':
          return { answer: () => { throw new ProjectChanged(input.projectPath, branch, repo.repoPath, outcome.previous) } }
        case 'unchanged':
          return { answer: (fetched: boolean) => ({ blob: blob.oid, previous: outcome.previous, attempts: 0, fetched }) }
        case 'commit':
          return {
            push: outcome.oid,
            objects: outcome.objects,
            answer: (attempts, fetched) => ({ commit: outcome.oid, blob: blob.oid, previous: outcome.previous, attempts, fetched })
          }
      }
    })
  }

  async function readInCache (repo: Repo, input: ReadProjectInput, tip: string): Promise<ReadProjectResult> {
    await caches.prepare(repo, input.log)
    let commit = tip
    let fetched = false
    if (await caches.resolveRef(repo, trackingRef(input.branch)) !== tip) {
      const base = await caches.fetchBase(repo, input.branch)
      fetched = true
      if (!base.exists || base.parent === undefined) throw new BranchNotFound(input.branch, repo.repoPath)
      commit = base.parent
    }
    const found = await findInTree(caches.trees(repo), await rootTree(repo, commit), input.projectPath)
    if (!found.ok || found.entry.type !== 'blob') {
      const what = found.ok ? `${input.projectPath} (a directory, not a file)` : found.missing
      throw new ProjectNotFound(what, input.branch, repo.repoPath, '')
    }
    try {
      const content = await blobReader(repo.gitdir, repo.cache).read(found.entry.oid, options.projectMaxBytes)
      return { content, blob: found.entry.oid, commit, fetched }
    } catch (err) {
      if (!(err instanceof BlobTooLarge)) throw err
      throw new ProjectTooLarge(input.projectPath, input.branch, repo.repoPath, err.description, options.projectMaxBytes)
    }
  }

  return {
    async initializeProject (input) {
      const repo = openRepo(input)
      return await inCache(repo, input, input.branch, async () => await initializeInCache(repo, input))
    },

    async updateProject (input) {
      const repo = openRepo(input)
      return await inCache(repo, input, input.branch, async () => await updateInCache(repo, input))
    },

    async readProject (input) {
      const repo = openRepo(input)
      // Always asked first: it says how fresh the cache is, and that the caller may read the repository.
      const tip = (await advertise(repo)).tips.get(branchRef(input.branch))
      if (tip === undefined) throw new BranchNotFound(input.branch, repo.repoPath)
      return await inCache(repo, input, undefined, async () => await readInCache(repo, input, tip), true)
    }
  }
}
