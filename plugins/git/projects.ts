// Project files (spec 4.2 and the platform's other project calls): read, created and replaced. A write is one commit built from objects in the
// repository's cache and pushed with our receive-pack push, under the lock of its branch, and made
// again on the new tip when another writer moved the branch meanwhile.
import git, { Errors } from 'isomorphic-git'
import fs from 'node:fs'
import type { Dispatcher } from 'undici'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../database/index.js'
import { HttpError } from '../../lib/http/errors.js'
import { KeyedMutex } from '../../lib/http/keyed-mutex.js'
import type { GitProvider } from '../../lib/git/providers.js'
import type { GitIdentity } from '../../lib/git/commit.js'
import { branchRef } from '../../lib/git/paths.js'
import { commitContent, gitObject, treeContent, type GitObject } from '../../lib/git/protocol/objects.js'
import { addFileToTree, findInTree, replaceFileInTree, type TreeEntry, type TreeStore } from '../../lib/git/tree.js'
import { trackingRef, type Base, type GitCaches, type Repo } from './cache.js'
import { pushCommit, type PushCapabilities } from './push.js'
import { advertise, describe, openRemote, type UserGitCredentials } from './transport.js'

/** The advisory lock that serialises writes to one branch of a repository across instances. */
export const lockName = (target: GitTarget, branch: string): string => `git:${target.provider.name.toLowerCase()}:${target.repoPath}:${branch}`

/** Pushes tried for one request when other writers keep moving the branch. */
export const MAX_PUSH_ATTEMPTS = 5

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

type BuiltCommit = { ok: true, oid: string, objects: GitObject[] } | { ok: false, conflict: string }

type Replacement =
  | { kind: 'no-branch' }
  | { kind: 'missing', missing: string }
  | { kind: 'stale', previous: string }
  | { kind: 'unchanged', previous: string }
  | { kind: 'commit', oid: string, objects: GitObject[], previous: string }

const where = (repo: Repo, branch: string): string => `branch ${branch} of repository ${repo.repoPath}`

export function branchNotFound (repo: { repoPath: string }, branch: string): HttpError {
  return new HttpError(404, `Branch ${branch} not found in repository ${repo.repoPath}`, { code: 'GIT_BRANCH_NOT_FOUND' })
}

/**
 * A tree the provider sent that isomorphic-git refuses to read (a path such as `.git` or `GIT~1`,
 * or a damaged entry): the branch holds it, so rebuilding the cache would not help.
 */
function treeRefused (repo: Repo, err: unknown): HttpError | undefined {
  const unsafe = err instanceof Errors.UnsafeFilepathError
  if (!unsafe && !(err instanceof Errors.InternalError && err.message.includes('GitTree'))) return undefined
  const detail = unsafe ? `a path Git refuses (${JSON.stringify(String((err.data as { filepath?: unknown }).filepath ?? '')).slice(0, 200)})` : 'a malformed tree'
  return new HttpError(502, `Git provider ${repo.provider.name} holds ${detail} in repository ${repo.repoPath}; ` +
    'the branch has to be repaired on the provider', { code: 'GIT_PROVIDER_TREE_REFUSED' })
}

export function gitProjects (options: {
  db: Db, caches: GitCaches, pushCapabilities: PushCapabilities, dispatcher: Dispatcher, maxResponseBytes: number
}): GitProjects {
  const { db, caches, pushCapabilities, dispatcher } = options
  // Serialises all work on one cache in this process; the advisory lock serialises instances.
  const cacheLocks = new KeyedMutex()

  function openRepo (target: GitTarget): Repo {
    return caches.open(openRemote(dispatcher, { provider: target.provider, repoPath: target.repoPath, maxBytes: options.maxResponseBytes, user: target.user }))
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
    return await cacheLocks.run(repo.gitdir, async () =>
      branch === undefined ? await work() : await db.withAdvisoryLock(lockName(target, branch), work))
  }

  async function rootTree (repo: Repo, commit: string): Promise<string> {
    return (await git.readCommit({ fs, gitdir: repo.gitdir, oid: commit, cache: repo.cache })).commit.tree
  }

  /**
   * The objects of a commit on its way, made in memory (lib/git/protocol/objects.ts) from trees read in the
   * cache: the push is sent from them, and the cache gets them while the provider works on it.
   */
  function newObjects (repo: Repo, blob: GitObject): { trees: TreeStore, commit: (tree: string, parent: string | undefined, input: InitializeProjectInput) => string, all: () => GitObject[] } {
    const made = new Map<string, GitObject>([[blob.oid, blob]])
    const madeTrees = new Map<string, TreeEntry[]>()
    const cached = caches.trees(repo)
    const add = (object: GitObject): string => {
      made.set(object.oid, object)
      return object.oid
    }
    return {
      trees: {
        readTree: async (oid) => madeTrees.get(oid) ?? await cached.readTree(oid),
        writeTree: async (entries) => {
          const oid = add(gitObject('tree', treeContent(entries)))
          madeTrees.set(oid, entries)
          return oid
        }
      },
      commit: (tree, parent, input) => add(gitObject('commit', commitContent({
        tree, parents: parent === undefined ? [] : [parent], author: input.author, committer: input.author, message: input.message
      }))),
      all: () => [...made.values()]
    }
  }

  /** The commit adding the file on `base`, from objects: only the trees on the path are touched. */
  async function buildCommit (repo: Repo, base: Base, blob: GitObject, input: InitializeProjectInput): Promise<BuiltCommit> {
    const root = base.parent === undefined ? undefined : await rootTree(repo, base.parent)
    const objects = newObjects(repo, blob)
    const added = await addFileToTree(objects.trees, root, input.projectPath, blob.oid)
    if (!added.ok) return added
    const oid = objects.commit(added.tree, base.parent, input)
    return { ok: true, oid, objects: objects.all() }
  }

  /**
   * What a write comes to on one tip of its branch: a commit to push and the answer once it is
   * pushed, or an answer with nothing to push (which may also be a refusal it throws).
   */
  type Attempt<R> =
    | { push: string, objects: GitObject[], answer: (attempts: number, fetched: boolean) => R }
    | { answer: (fetched: boolean) => R }

  /**
   * The loop every write shares: decide on the cached tip, or on the provider's current tip when
   * the cached one cannot tell (only that tip can say "taken", "missing", "changed" or
   * "unchanged"); push the commit; when the branch moved meanwhile, the other commit stays and
   * ours is made again on top of it.
   */
  async function pushOnTip<R> (repo: Repo, branch: string, log: InitializeProjectInput['log'], attemptOn: (base: Base) => Promise<Attempt<R>>): Promise<R> {
    let fetched = false
    const fetchFresh = async (): Promise<Base> => {
      fetched = true
      return await caches.fetchBase(repo, branch)
    }
    let base = await caches.cachedBase(repo, branch)
    for (let attempt = 1; attempt <= MAX_PUSH_ATTEMPTS; attempt++) {
      base ??= await fetchFresh()
      let next = await attemptOn(base)
      if (!('push' in next) && !base.fresh) {
        base = await fetchFresh()
        next = await attemptOn(base)
      }
      if (!('push' in next)) return next.answer(fetched)
      // The cache gets the commit's objects while the provider works on the push; they are all
      // written before the branch's tracking ref moves, or the next attempt reads the cache.
      const written = caches.writeObjects(repo, next.objects)
      written.catch(() => {}) // read below: only keeps a failure before then from counting as unhandled
      let pushed: boolean
      try {
        pushed = await pushCommit(repo, pushCapabilities, branch, base, next.push, next.objects)
      } catch (err) {
        await written.catch(() => {})
        throw err
      }
      if (pushed) {
        await caches.recordPush(repo, branch, next.push, written, log)
        return next.answer(attempt, fetched)
      }
      await written
      base = undefined
    }
    throw busy(repo, branch)
  }

  async function initializeInCache (repo: Repo, input: InitializeProjectInput): Promise<InitializeProjectResult> {
    const { branch } = input
    await caches.prepare(repo, input.log)
    const blob = gitObject('blob', Buffer.from(input.content, 'utf8'))
    return await pushOnTip(repo, branch, input.log, async (base): Promise<Attempt<InitializeProjectResult>> => {
      const built = await buildCommit(repo, base, blob, input)
      if (!built.ok) {
        return { answer: () => { throw new HttpError(409, `${built.conflict} on ${where(repo, branch)}`, { code: 'GIT_PROJECT_EXISTS' }) } }
      }
      return {
        push: built.oid,
        objects: built.objects,
        answer: (attempts, fetched) => ({ commit: built.oid, blob: blob.oid, branchCreated: !base.exists, attempts, fetched })
      }
    })
  }

  function busy (repo: Repo, branch: string): HttpError {
    return new HttpError(503, `Branch ${branch} of repository ${repo.repoPath} kept moving during ${MAX_PUSH_ATTEMPTS} pushes; try again`,
      { code: 'GIT_BRANCH_BUSY' })
  }

  /** What replacing the file on `base` comes to: a commit to push, or why there is none. */
  async function replacement (repo: Repo, base: Base, blob: GitObject, input: UpdateProjectInput): Promise<Replacement> {
    if (!base.exists || base.parent === undefined) return { kind: 'no-branch' }
    const objects = newObjects(repo, blob)
    const replaced = await replaceFileInTree(objects.trees, await rootTree(repo, base.parent), input.projectPath, blob.oid)
    if (!replaced.ok) return { kind: 'missing', missing: replaced.missing }
    if (input.ifMatch !== undefined && !input.ifMatch.includes(replaced.previous)) return { kind: 'stale', previous: replaced.previous }
    if ('unchanged' in replaced) return { kind: 'unchanged', previous: replaced.previous }
    const oid = objects.commit(replaced.tree, base.parent, input)
    return { kind: 'commit', oid, objects: objects.all(), previous: replaced.previous }
  }

  async function updateInCache (repo: Repo, input: UpdateProjectInput): Promise<UpdateProjectResult> {
    const { branch } = input
    await caches.prepare(repo, input.log)
    const blob = gitObject('blob', Buffer.from(input.content, 'utf8'))
    return await pushOnTip(repo, branch, input.log, async (base): Promise<Attempt<UpdateProjectResult>> => {
      const outcome = await replacement(repo, base, blob, input)
      switch (outcome.kind) {
        case 'no-branch':
          return { answer: () => { throw branchNotFound(repo, branch) } }
        case 'missing':
          return {
            answer: () => {
              throw new HttpError(404, `Project ${outcome.missing} not found on ${where(repo, branch)}; initialize it first (POST)`,
                { code: 'GIT_PROJECT_NOT_FOUND' })
            }
          }
        case 'stale':
          return {
            answer: () => {
              throw new HttpError(409, `Project ${input.projectPath} on ${where(repo, branch)} changed since it was read ` +
                `(If-Match); it now has ETag "${outcome.previous}"`, { code: 'GIT_PROJECT_CHANGED' })
            }
          }
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
      if (!base.exists || base.parent === undefined) throw branchNotFound(repo, input.branch)
      commit = base.parent
    }
    const found = await findInTree(caches.trees(repo), await rootTree(repo, commit), input.projectPath)
    if (!found.ok || found.entry.type !== 'blob') {
      const what = found.ok ? `${input.projectPath} (a directory, not a file)` : found.missing
      throw new HttpError(404, `Project ${what} not found on ${where(repo, input.branch)}`, { code: 'GIT_PROJECT_NOT_FOUND' })
    }
    const { blob } = await git.readBlob({ fs, gitdir: repo.gitdir, oid: found.entry.oid, cache: repo.cache })
    return { content: Buffer.from(blob), blob: found.entry.oid, commit, fetched }
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
      if (tip === undefined) throw branchNotFound(repo, input.branch)
      return await inCache(repo, input, undefined, async () => await readInCache(repo, input, tip), true)
    }
  }
}
