// A project commit and its push: the commit made from objects in the repository's cache (only the
// trees on the file's path are touched), and the loop that makes it again on the new tip when
// another writer moved the branch meanwhile.
import git from 'isomorphic-git'
import fs from 'node:fs'
import type { FastifyBaseLogger } from 'fastify'
import { BranchBusy } from '../../lib/git/errors.js'
import type { GitIdentity } from '../../lib/git/commit.js'
import { commitContent, gitObject, treeContent, type GitObject } from '../../lib/git/protocol/objects.js'
import { addFileToTree, replaceFileInTree, type TreeEntry, type TreeStore } from '../../lib/git/tree.js'
import type { Base, GitCaches, Repo } from './cache.js'
import { pushCommit, type PushCapabilities } from './push.js'

/** Pushes tried for one request when other writers keep moving the branch. */
export const MAX_PUSH_ATTEMPTS = 5

/** The file a commit writes and what the commit says. */
export interface FileCommit {
  projectPath: string
  /** Ends in a newline. */
  message: string
  author: GitIdentity
}

export type Addition = { ok: true, oid: string, objects: GitObject[] } | { ok: false, conflict: string }

export type Replacement =
  | { kind: 'no-branch' }
  | { kind: 'missing', missing: string }
  | { kind: 'stale', previous: string }
  | { kind: 'unchanged', previous: string }
  | { kind: 'commit', oid: string, objects: GitObject[], previous: string }

/**
 * What a write comes to on one tip of its branch: a commit to push and the answer once it is
 * pushed, or an answer with nothing to push (which may also be a refusal it throws).
 */
export type Attempt<R> =
  | { push: string, objects: GitObject[], answer: (attempts: number, fetched: boolean) => R }
  | { answer: (fetched: boolean) => R }

export interface ProjectCommits {
  /** The commit adding the file on `base`, or what takes its path. */
  addition: (repo: Repo, base: Base, blob: GitObject, file: FileCommit) => Promise<Addition>
  /** What replacing the file on `base` comes to: a commit to push, or why there is none. */
  replacement: (repo: Repo, base: Base, blob: GitObject, file: FileCommit & { ifMatch?: string[] }) => Promise<Replacement>
  /** Decides on a tip with `attemptOn` and pushes what it makes, until a push lands or the answer needs none. */
  pushOnTip: <R>(repo: Repo, branch: string, log: FastifyBaseLogger, attemptOn: (base: Base) => Promise<Attempt<R>>) => Promise<R>
}

export async function rootTree (repo: Repo, commit: string): Promise<string> {
  return (await git.readCommit({ fs, gitdir: repo.gitdir, oid: commit, cache: repo.cache })).commit.tree
}

export function projectCommits (options: { caches: GitCaches, pushCapabilities: PushCapabilities }): ProjectCommits {
  const { caches, pushCapabilities } = options

  /**
   * The objects of a commit on its way, made in memory (lib/git/protocol/objects.ts) from trees read in the
   * cache: the push is sent from them, and the cache gets them while the provider works on it.
   */
  function newObjects (repo: Repo, blob: GitObject): { trees: TreeStore, commit: (tree: string, parent: string | undefined, file: FileCommit) => string, all: () => GitObject[] } {
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
      commit: (tree, parent, file) => add(gitObject('commit', commitContent({
        tree, parents: parent === undefined ? [] : [parent], author: file.author, committer: file.author, message: file.message
      }))),
      all: () => [...made.values()]
    }
  }

  async function addition (repo: Repo, base: Base, blob: GitObject, file: FileCommit): Promise<Addition> {
    const root = base.parent === undefined ? undefined : await rootTree(repo, base.parent)
    const objects = newObjects(repo, blob)
    const added = await addFileToTree(objects.trees, root, file.projectPath, blob.oid)
    if (!added.ok) return added
    const oid = objects.commit(added.tree, base.parent, file)
    return { ok: true, oid, objects: objects.all() }
  }

  async function replacement (repo: Repo, base: Base, blob: GitObject, file: FileCommit & { ifMatch?: string[] }): Promise<Replacement> {
    if (!base.exists || base.parent === undefined) return { kind: 'no-branch' }
    const objects = newObjects(repo, blob)
    const replaced = await replaceFileInTree(objects.trees, await rootTree(repo, base.parent), file.projectPath, blob.oid)
    if (!replaced.ok) return { kind: 'missing', missing: replaced.missing }
    if (file.ifMatch !== undefined && !file.ifMatch.includes(replaced.previous)) return { kind: 'stale', previous: replaced.previous }
    if ('unchanged' in replaced) return { kind: 'unchanged', previous: replaced.previous }
    const oid = objects.commit(replaced.tree, base.parent, file)
    return { kind: 'commit', oid, objects: objects.all(), previous: replaced.previous }
  }

  /**
   * The loop every write shares: decide on the cached tip, or on the provider's current tip when
   * the cached one cannot tell (only that tip can say "taken", "missing", "changed" or
   * "unchanged"); push the commit; when the branch moved meanwhile, the other commit stays and
   * ours is made again on top of it.
   */
  async function pushOnTip<R> (repo: Repo, branch: string, log: FastifyBaseLogger, attemptOn: (base: Base) => Promise<Attempt<R>>): Promise<R> {
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
    throw new BranchBusy(branch, repo.repoPath, MAX_PUSH_ATTEMPTS)
  }

  return { addition, replacement, pushOnTip }
}
