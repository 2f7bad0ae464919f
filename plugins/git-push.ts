// Our push: one ref update with a pack of exactly the objects a commit added, sent to the
// provider's receive-pack only while the branch is where the commit was built on.
import git, { Errors } from 'isomorphic-git'
import fs from 'node:fs'
import { STATUS_CODES } from 'node:http'
import { HttpError } from '../lib/http/errors.js'
import { branchRef } from '../lib/git/paths.js'
import { ZERO_OID, parseReceivePackResponse, pushCapabilities, receivePackRequest } from '../lib/git/receive-pack.js'
import type { Base, Repo } from './git-cache.js'
import { AGENT, remote, remoteError, type Remote } from './git-transport.js'

/** What the provider says about its branches before a push: their tips and its capabilities. */
export async function discoverPush (repo: Remote): Promise<{ tip: (ref: string) => string, capabilities: Record<string, string | true> }> {
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
export async function pushCommit (repo: Repo, branch: string, base: Base, commit: string, objects: string[]): Promise<boolean> {
  const expected = base.exists && base.parent !== undefined ? base.parent : ZERO_OID
  return await pushRef(repo, branch, expected, commit, async () =>
    (await git.packObjects({ fs, gitdir: repo.gitdir, oids: objects, cache: repo.cache })).packfile ?? new Uint8Array())
}

/**
 * Sets the branch from `expected` (ZERO_OID: it does not exist) to `newOid`, sending the pack
 * `pack` makes. Returns false when the branch is not at `expected`; throws when the push is refused.
 */
export async function pushRef (repo: Remote, branch: string, expected: string, newOid: string, pack: () => Promise<Uint8Array>): Promise<boolean> {
  const ref = branchRef(branch)
  const before = await discoverPush(repo)
  if (before.tip(ref) !== expected) return false
  const packfile = await pack()
  const capabilities = pushCapabilities(before.capabilities, AGENT)
  const result = await remote(repo, async () => await repo.exchange({
    url: `${repo.url}/git-receive-pack`,
    method: 'POST',
    headers: {
      ...repo.headers(),
      'content-type': 'application/x-git-receive-pack-request',
      accept: 'application/x-git-receive-pack-result',
      'user-agent': AGENT
    },
    body: receivePackRequest({ oldOid: expected, newOid, ref }, capabilities, packfile)
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
