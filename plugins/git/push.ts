// Our push: one ref update with a pack of exactly the objects a commit added, sent to the
// provider's receive-pack only while the branch is where the commit was built on.
import git, { Errors } from 'isomorphic-git'
import { STATUS_CODES } from 'node:http'
import { PushRefused } from '../../lib/git/errors.js'
import { branchRef } from '../../lib/git/paths.js'
import { packOf, type GitObject } from '../../lib/git/protocol/objects.js'
import { ZERO_OID, parseReceivePackResponse, pushCapabilities, receivePackRequest, type PushReport } from '../../lib/git/protocol/receive-pack.js'
import type { Base } from './cache.js'
import { AGENT, postService, remote, remoteError, type Remote } from './transport.js'

type Capabilities = Record<string, string | true>

/** Remotes whose receive-pack capabilities are remembered; the oldest is dropped past this. */
export const REMEMBERED_REMOTES = 1024

/**
 * What each remote's receive-pack advertised, by remote URL: a push to a remote seen before needs
 * no advertisement of its own (the receive-pack request carries the old id, which the server
 * checks under its ref lock). Forgotten when a push to the remote fails, so the next one asks again.
 */
export class PushCapabilities {
  readonly #byUrl = new Map<string, Capabilities>()

  get (url: string): Capabilities | undefined {
    return this.#byUrl.get(url)
  }

  remember (url: string, capabilities: Capabilities): void {
    this.#byUrl.delete(url)
    this.#byUrl.set(url, capabilities)
    for (const oldest of this.#byUrl.keys()) {
      if (this.#byUrl.size <= REMEMBERED_REMOTES) break
      this.#byUrl.delete(oldest)
    }
  }

  forget (url: string): void {
    this.#byUrl.delete(url)
  }
}

/** What the provider says about its branches before a push: their tips and its capabilities (remembered). */
export async function discoverPush (repo: Remote, known: PushCapabilities): Promise<{ tip: (ref: string) => string, capabilities: Capabilities }> {
  const info = await remote(repo, async () => await git.getRemoteInfo2({
    http: repo.http, url: repo.url, headers: repo.headers(), forPush: true, protocolVersion: 1
  }))
  known.remember(repo.url, info.capabilities)
  return { tip: (ref) => info.refs?.find((r) => r.ref === ref)?.oid ?? ZERO_OID, capabilities: info.capabilities }
}

/**
 * Pushes `commit` to the branch if the branch is still where `base` says, sending exactly the
 * objects the commit added. (isomorphic-git's push walks the whole tree of the commit and of its
 * parent to work that out: a cost that grows with the repository.) The server applies the update
 * only if the branch is still at the old value given, so a race with another writer cannot lose
 * a commit. Returns false when the branch moved; throws when the provider refuses the push.
 */
export async function pushCommit (repo: Remote, known: PushCapabilities, branch: string, base: Base, commit: string, objects: readonly GitObject[]): Promise<boolean> {
  const expected = base.exists && base.parent !== undefined ? base.parent : ZERO_OID
  return await pushRef(repo, known, branch, expected, commit, async () => packOf(objects))
}

/**
 * Sets the branch from `expected` (ZERO_OID: it does not exist) to `newOid`, sending the pack
 * `pack` makes. Returns false when the branch is not at `expected`; throws when the push is refused.
 *
 * One exchange when the remote's capabilities are known: the request is sent without looking at
 * the branch first, since receive-pack updates the ref only if it is still at `expected` (checked
 * under its ref lock); a refusal is followed by a look at the branch, which says whether it moved
 * (false) or the push was refused for another reason (thrown). Unknown capabilities are asked for
 * with the branch's tip, and a branch not at `expected` then costs no pack.
 */
export async function pushRef (repo: Remote, known: PushCapabilities, branch: string, expected: string, newOid: string,
  pack: () => Promise<Uint8Array>): Promise<boolean> {
  const ref = branchRef(branch)
  let advertised = known.get(repo.url)
  if (advertised === undefined) {
    const before = await discoverPush(repo, known)
    if (before.tip(ref) !== expected) return false
    advertised = before.capabilities
  }
  const packfile = await pack()
  const capabilities = pushCapabilities(advertised, AGENT)
  let report: PushReport
  try {
    const result = await remote(repo, async () =>
      await postService(repo, 'git-receive-pack', receivePackRequest({ oldOid: expected, newOid, ref }, capabilities, packfile)))
    if (result.statusCode !== 200) {
      const refused = new Errors.HttpError(result.statusCode, STATUS_CODES[result.statusCode] ?? '', '')
      throw remoteError(repo, refused) ?? refused
    }
    report = await remote(repo, async () => parseReceivePackResponse(result.data, capabilities.includes('side-band-64k')))
  } catch (err) {
    // Whatever went wrong, the next push asks the remote again rather than trust what it said before.
    known.forget(repo.url)
    throw err
  }
  const status = report.refs.get(ref)
  if (report.unpack === 'ok' && status?.ok === true) return true
  if ((await discoverPush(repo, known)).tip(ref) !== expected) return false
  const reason = report.unpack !== 'ok' ? `unpack ${report.unpack}` : status?.reason ?? 'no status for the branch'
  const said = report.messages.length > 0 ? ` (${report.messages.join(' | ')})` : ''
  const refused = new PushRefused(repo.provider.name, branch, repo.repoPath, `${reason}${said}`)
  // The provider's words are quoted: scrubbed of the credentials, and bounded.
  refused.message = repo.redact(refused.message).slice(0, 2000)
  throw refused
}
