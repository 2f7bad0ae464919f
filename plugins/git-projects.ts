// Project files in a repository (spec 4.2): each write is one commit built from objects in the
// repository's cache, pushed with our receive-pack push, under the lock of its branch.
import git from 'isomorphic-git'
import fs from 'node:fs'
import type { Dispatcher } from 'undici'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from './database.js'
import { HttpError } from '../lib/http/errors.js'
import { KeyedMutex } from '../lib/http/keyed-mutex.js'
import type { GitProvider } from '../lib/git/providers.js'
import type { GitIdentity } from '../lib/git/commit.js'
import { addFileToTree } from '../lib/git/tree.js'
import type { Base, GitCaches, Repo } from './git-cache.js'
import { pushCommit } from './git-push.js'
import { describe, openRemote } from './git-transport.js'

/** Pushes tried for one request when other writers keep moving the branch. */
export const MAX_PUSH_ATTEMPTS = 5

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

type BuiltCommit = { ok: true, oid: string, objects: string[] } | { ok: false, conflict: string }

export interface GitProjects {
  /** Writes a new file on a branch in one commit; 409 when the path is taken. */
  initializeProject: (input: InitializeProjectInput) => Promise<InitializeProjectResult>
}

export function gitProjects (options: { db: Db, caches: GitCaches, dispatcher: Dispatcher }): GitProjects {
  const { db, caches, dispatcher } = options
  // Serialises all work on one cache in this process; the advisory lock serialises instances.
  const cacheLocks = new KeyedMutex()

  /** The commit adding the file on `base`, from objects: only the trees on the path are touched. */
  async function buildCommit (repo: Repo, base: Base, blob: string, input: InitializeProjectInput): Promise<BuiltCommit> {
    const rootTree = base.parent === undefined
      ? undefined
      : (await git.readCommit({ fs, gitdir: repo.gitdir, oid: base.parent, cache: repo.cache })).commit.tree
    const added = await addFileToTree(caches.trees(repo), rootTree, input.projectPath, blob)
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

  async function initializeInCache (repo: Repo, input: InitializeProjectInput): Promise<InitializeProjectResult> {
    const { branch } = input
    await caches.prepare(repo, input.log)
    const blob = await git.writeBlob({ fs, gitdir: repo.gitdir, blob: Buffer.from(input.content, 'utf8') })
    let fetched = false
    const fetchFresh = async (): Promise<Base> => {
      fetched = true
      return await caches.fetchBase(repo, branch)
    }
    let base = await caches.cachedBase(repo, branch)
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
        await caches.recordPush(repo, branch, built.oid, input.log)
        return { commit: built.oid, branchCreated: !base.exists, attempts: attempt, fetched }
      }
      base = undefined // the branch moved: fetch its new tip and make the commit again there
    }
    throw new HttpError(503, `Branch ${branch} of repository ${repo.repoPath} kept moving during ${MAX_PUSH_ATTEMPTS} pushes; try again`,
      { code: 'GIT_BRANCH_BUSY' })
  }

  async function initializeProject (input: InitializeProjectInput): Promise<InitializeProjectResult> {
    const repo = caches.open(openRemote(dispatcher, input.provider, input.repoPath))
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
        await caches.create(repo)
        return await initializeInCache(repo, input)
      }
    }))
  }

  return { initializeProject }
}
