// Fetching one ref of a provider into a bare cache. Replaces isomorphic-git's fetch on this path:
// its pack index dominates a first fetch of a large repository (lib/git/protocol/README.md), so the
// negotiation is done here (lib/git/protocol/upload-pack.ts) and the index built by
// lib/git/protocol/pack-index.ts. The cache is left as isomorphic-git's fetch leaves it (pack and
// index under objects/pack, the shallow file, tracking refs under refs/remotes/origin), and
// everything else reads it through isomorphic-git.
import git, { Errors } from 'isomorphic-git'
import fs from 'node:fs'
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { readSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import path from 'node:path'
import { indexPack, type PackSource } from '../../lib/git/protocol/pack-index.js'
import { validateBranchName } from '../../lib/git/paths.js'
import { GitProtocolError } from '../../lib/git/protocol/receive-pack.js'
import { UploadPackReader, fetchCapabilities, uploadPackRequest } from '../../lib/git/protocol/upload-pack.js'
import { AGENT, postService, type Remote } from './transport.js'

export interface FetchTarget {
  gitdir: string
  /** isomorphic-git's memory of parsed packs for this cache. */
  cache: object
}

export interface FetchOptions {
  /** `HEAD` or a full ref of the provider (`refs/heads/<branch>`). */
  remoteRef: string
  /** A ref of the cache whose commit is offered as "have". */
  have?: string
  /** Commits of history to fetch (all that is new unless given). */
  depth?: number
}

const REMOTE = 'origin'
const HEADS = 'refs/heads/'

async function resolve (target: FetchTarget, ref: string): Promise<string | undefined> {
  try {
    return await git.resolveRef({ fs, gitdir: target.gitdir, ref })
  } catch (err) {
    if (err instanceof Errors.NotFoundError) return undefined
    throw err
  }
}

async function hasObject (target: FetchTarget, oid: string): Promise<boolean> {
  try {
    await git.readObject({ fs, gitdir: target.gitdir, oid, format: 'deflated', cache: target.cache })
    return true
  } catch (err) {
    if (err instanceof Errors.NotFoundError) return false
    throw err
  }
}

async function readShallow (gitdir: string): Promise<Set<string>> {
  const text = await readFile(path.join(gitdir, 'shallow'), 'utf8').catch(() => '')
  return new Set(text.split('\n').map((l) => l.trim()).filter((l) => l !== ''))
}

/** Writes `data` to `file` through a side file renamed into place, so a reader never sees half of it. */
async function writeWhole (file: string, data: Uint8Array | string): Promise<void> {
  const side = `${file}.${randomBytes(6).toString('hex')}.tmp`
  try {
    await writeFile(side, data)
    await rename(side, file)
  } finally {
    await rm(side, { force: true })
  }
}

/**
 * Fetches `remoteRef` from the provider into the cache and points its tracking ref at it.
 * Resolves to the fetched commit, or null when the repository has no refs at all; throws
 * isomorphic-git's NotFoundError (what: remoteRef) when the provider has no such ref.
 */
export async function fetchInto (remote: Remote, target: FetchTarget, options: FetchOptions): Promise<{ fetchHead: string | null }> {
  const info = await git.getRemoteInfo2({ http: remote.http, url: remote.url, headers: remote.headers(), protocolVersion: 1 })
  const refs = info.refs ?? []
  if (refs.length === 0) return { fetchHead: null }
  const advertised = refs.find((r) => r.ref === options.remoteRef)
  if (advertised === undefined) throw new Errors.NotFoundError(options.remoteRef)
  const want = advertised.oid
  if (!/^[0-9a-f]{40}$/.test(want)) throw new GitProtocolError(`the provider advertised ${options.remoteRef} at no object id`)

  // A commit the cache already holds (a push of ours, a branch made from another) needs no pack.
  if (!await hasObject(target, want)) {
    const haveOid = options.have === undefined ? undefined : await resolve(target, options.have)
    const haves = haveOid !== undefined && await hasObject(target, haveOid) ? [haveOid] : []
    const shallows = await readShallow(target.gitdir)
    const capabilities = fetchCapabilities(info.capabilities, AGENT, options.depth !== undefined || shallows.size > 0)
    const sideBand = capabilities.some((c) => c.startsWith('side-band'))
    // The pack goes to a file as it comes (never held whole), is indexed from it a window at a
    // time, and is renamed into place once its index is written.
    const partial = path.join(target.gitdir, 'objects', 'pack', `incoming-${randomBytes(6).toString('hex')}.pack.tmp`)
    const file = await open(partial, 'w+')
    try {
      const reader = new UploadPackReader(sideBand)
      const result = await postService(remote, 'git-upload-pack',
        uploadPackRequest({ want, haves, shallows: [...shallows], depth: options.depth, capabilities }),
        async (chunk) => { for (const part of reader.push(chunk)) await file.write(part) })
      if (result.statusCode !== 200) {
        throw new Errors.HttpError(result.statusCode, STATUS_CODES[result.statusCode] ?? '', '')
      }
      reader.end()
      const { size } = await file.stat()
      const source: PackSource = {
        size,
        read: (position, length) => {
          const out = Buffer.allocUnsafe(Math.max(0, Math.min(length, size - position)))
          const read = readSync(file.fd, out, 0, out.length, position)
          return out.subarray(0, read)
        }
      }
      const index = await indexPack(source)
      if (!index.oids.includes(want)) throw new GitProtocolError('the pack lacks the commit asked for')
      await file.close()
      const packFile = path.join(target.gitdir, 'objects', 'pack', `pack-${index.packSha}`)
      // The index last: isomorphic-git finds packs by their index, so a pack is never seen half written.
      await rename(partial, `${packFile}.pack`)
      await writeWhole(`${packFile}.idx`, index.idx)
      if (reader.shallow.length > 0 || reader.unshallow.length > 0) {
        for (const oid of reader.shallow) shallows.add(oid)
        for (const oid of reader.unshallow) shallows.delete(oid)
        await writeWhole(path.join(target.gitdir, 'shallow'), [...shallows].map((oid) => `${oid}\n`).join(''))
      }
    } finally {
      await file.close().catch(() => {})
      await rm(partial, { force: true })
    }
  }

  // The tracking refs isomorphic-git's fetch of one branch writes: the branch's, and for HEAD a
  // symbolic refs/remotes/origin/HEAD to the default branch's.
  const tracking = (ref: string): string => `refs/remotes/${REMOTE}/${ref.slice(HEADS.length)}`
  if (options.remoteRef === 'HEAD') {
    const defaultBranch = advertised.target?.startsWith(HEADS) === true ? advertised.target : undefined
    // A default branch named as no branch can be (a hostile advertisement) is tracked by its commit alone.
    if (defaultBranch !== undefined && validateBranchName(defaultBranch.slice(HEADS.length)).ok) {
      await git.writeRef({ fs, gitdir: target.gitdir, ref: tracking(defaultBranch), value: want, force: true })
      await git.writeRef({ fs, gitdir: target.gitdir, ref: `refs/remotes/${REMOTE}/HEAD`, value: tracking(defaultBranch), symbolic: true, force: true })
    } else {
      await git.writeRef({ fs, gitdir: target.gitdir, ref: `refs/remotes/${REMOTE}/HEAD`, value: want, force: true })
    }
  } else if (options.remoteRef.startsWith(HEADS)) {
    await git.writeRef({ fs, gitdir: target.gitdir, ref: tracking(options.remoteRef), value: want, force: true })
  }
  return { fetchHead: want }
}
