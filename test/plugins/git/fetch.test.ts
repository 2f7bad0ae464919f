import t from 'tap'
import git from 'isomorphic-git'
import fs from 'node:fs'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { Agent } from 'undici'
import { createHash } from 'node:crypto'
import { deflateSync } from 'node:zlib'
import { gitCli, startGitServer } from '../../fixtures/git-server.js'
import { fetchInto, type FetchTarget } from '../../../plugins/git/fetch.js'
import { openRemote, remote, type Remote } from '../../../plugins/git/transport.js'
import { pktLine } from '../../../lib/git/protocol/receive-pack.js'
import { HttpError } from '../../../lib/http/errors.js'

const server = await startGitServer({ username: 'bot', password: 'token-1' })
const dispatcher = new Agent()
const work = await mkdtemp(path.join(os.tmpdir(), 'git-fetch-'))
t.teardown(async () => {
  await server.close()
  await dispatcher.close()
  await rm(work, { recursive: true, force: true })
})

const provider = (url: string) => ({ name: 'GitHub', url, username: 'bot', token: 'token-1', timeoutMs: 10_000 })
const remoteOf = (repoPath: string, url = server.url): Remote =>
  openRemote(dispatcher, { provider: provider(url), repoPath, maxBytes: 64 * 1024 * 1024 })

let caches = 0
/** An empty bare cache as the service makes one. */
async function emptyCache (url: string): Promise<FetchTarget> {
  const gitdir = path.join(work, `cache-${caches++}.git`)
  await git.init({ fs, dir: gitdir, bare: true, defaultBranch: 'main' })
  await git.addRemote({ fs, gitdir, remote: 'origin', url })
  return { gitdir, cache: {} }
}

const cacheGit = async (target: FetchTarget, ...args: string[]): Promise<string> => (await gitCli(['--git-dir', target.gitdir, ...args])).trimEnd()
const serverGit = async (repo: string, ...args: string[]): Promise<string> => (await gitCli(['--git-dir', server.repoDir(repo), ...args])).trimEnd()
const posts = (from: number): number => server.requestLog.slice(from).filter((r) => r.method === 'POST').length

t.test('a first fetch at depth 1, then only what is new; the cache reads as git reads it', async (t) => {
  const repo = 'netops/history'
  await server.makeLargeRepo(repo, { files: 300, commits: 10 })
  const r = remoteOf(repo)
  const target = await emptyCache(r.url)
  const tip = await serverGit(repo, 'rev-parse', 'main')

  t.same(await fetchInto(r, target, { remoteRef: 'refs/heads/main', depth: 1 }), { fetchHead: tip })
  t.equal(await cacheGit(target, 'rev-parse', 'refs/remotes/origin/main'), tip)
  t.equal((await readFile(path.join(target.gitdir, 'shallow'), 'utf8')).trim(), tip, 'the tip is the shallow boundary')
  // git itself checks the pack against the index, and reads the whole tree through them.
  const [idx] = (await readdir(path.join(target.gitdir, 'objects', 'pack'))).filter((f) => f.endsWith('.idx'))
  await cacheGit(target, 'verify-pack', path.join(target.gitdir, 'objects', 'pack', idx as string))
  t.equal(await cacheGit(target, 'ls-tree', '-r', '--name-only', 'refs/remotes/origin/main'), await serverGit(repo, 'ls-tree', '-r', '--name-only', 'main'))
  t.equal(await cacheGit(target, 'rev-list', '--count', 'refs/remotes/origin/main'), '1', 'one commit of history')

  // Another writer adds a commit: the next fetch says what it has and gets only that commit's objects.
  const clone = path.join(work, 'writer')
  await gitCli(['-c', `http.extraHeader=Authorization: ${r.headers().Authorization}`, 'clone', '-q', r.url, clone])
  await writeFile(path.join(clone, 'new.json'), '{}\n')
  await gitCli(['add', '-A'], { cwd: clone })
  await gitCli(['-c', 'user.name=W', '-c', 'user.email=w@example.com', 'commit', '-q', '-m', 'New'], { cwd: clone })
  await gitCli(['-c', `http.extraHeader=Authorization: ${r.headers().Authorization}`, 'push', '-q', 'origin', 'HEAD:main'], { cwd: clone })
  const next = await serverGit(repo, 'rev-parse', 'main')
  t.same(await fetchInto(r, target, { remoteRef: 'refs/heads/main', have: 'refs/remotes/origin/main' }), { fetchHead: next })
  const packs = (await readdir(path.join(target.gitdir, 'objects', 'pack'))).filter((f) => f.endsWith('.idx'))
  t.equal(packs.length, 2)
  t.equal(await cacheGit(target, 'cat-file', '-p', `${next}:new.json`), '{}')
  t.equal((await git.readBlob({ fs, gitdir: target.gitdir, oid: next, filepath: 'new.json', cache: target.cache })).blob.length, 3,
    'isomorphic-git reads the new pack through the index written for it')

  // HEAD: the default branch tracked, refs/remotes/origin/HEAD pointing at it.
  const mark = server.requestLog.length
  t.same(await fetchInto(r, target, { remoteRef: 'HEAD', have: 'refs/remotes/origin/main' }), { fetchHead: next })
  t.equal(await cacheGit(target, 'symbolic-ref', 'refs/remotes/origin/HEAD'), 'refs/remotes/origin/main')
  t.equal(posts(mark), 0, 'a commit the cache holds is not fetched again')
})

t.test('an empty repository, and a branch the provider does not have', async (t) => {
  await gitCli(['init', '-q', '--bare', '--initial-branch=main', server.repoDir('netops/empty')])
  const empty = remoteOf('netops/empty')
  t.same(await fetchInto(empty, await emptyCache(empty.url), { remoteRef: 'refs/heads/main', depth: 1 }), { fetchHead: null })
  await server.createRepo('netops/small')
  const small = remoteOf('netops/small')
  await t.rejects(fetchInto(small, await emptyCache(small.url), { remoteRef: 'refs/heads/nope', depth: 1 }), { code: 'NotFoundError', data: { what: 'refs/heads/nope' } })
})

/** A provider that advertises `refs` and answers every fetch with `answer`. */
async function fakeProvider (refs: string, answer: Buffer): Promise<{ url: string, close: () => Promise<void> }> {
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' })
      res.end(Buffer.concat([pktLine('# service=git-upload-pack\n'), Buffer.from('0000'), Buffer.from(refs), Buffer.from('0000')]))
    } else {
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result' })
      res.end(answer)
    }
  })
  http.listen(0, '127.0.0.1')
  await once(http, 'listening')
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: async () => { http.closeAllConnections(); http.close(); await once(http, 'close') }
  }
}

t.test('a provider that sends a corrupt pack or a bad advertisement: a 502, and no pack in the cache', async (t) => {
  const tip = '1'.repeat(40)
  const advertise = (oid: string, extra = ''): string =>
    pktLine(`${oid} HEAD\u0000side-band-64k ofs-delta shallow symref=HEAD:refs/heads/main${extra}\n`).toString('latin1') +
    pktLine(`${oid} refs/heads/main\n`).toString('latin1')
  const band1 = (data: Buffer): Buffer => pktLine(Buffer.concat([Buffer.from([1]), data]))
  const cases: Array<[string, string, Buffer]> = [
    ['a pack that is not one', advertise(tip), Buffer.concat([pktLine('NAK\n'), band1(Buffer.from('PACK not really a pack, checksum wrong')), Buffer.from('0000')])],
    ['no pack at all', advertise(tip), Buffer.concat([pktLine('NAK\n'), Buffer.from('0000')])],
    ['an answer that is not pkt-lines', advertise(tip), Buffer.from('<html>oops</html>')],
    ['an error in band 3', advertise(tip), Buffer.concat([pktLine('NAK\n'), pktLine(Buffer.concat([Buffer.from([3]), Buffer.from('upload-pack: out of memory\n')]))])],
    ['a ref at no object id', advertise('zz'.repeat(20)), Buffer.alloc(0)]
  ]
  for (const [name, refs, answer] of cases) {
    const fake = await fakeProvider(refs, answer)
    const r = remoteOf('netops/fake', fake.url)
    const target = await emptyCache(r.url)
    try {
      const failure = await remote(r, async () => await fetchInto(r, target, { remoteRef: 'refs/heads/main', depth: 1 })).then(() => undefined, (err: unknown) => err)
      t.ok(failure instanceof HttpError && failure.statusCode === 502, `${name}: 502 (${String(failure)})`)
      t.same((await readdir(path.join(target.gitdir, 'objects', 'pack'))), [], `${name}: nothing written`)
    } finally {
      await fake.close()
    }
  }
})

t.test('a pack with an object past what indexing takes: 502 GIT_PROVIDER_PACK_TOO_LARGE, refused from its header', async (t) => {
  const tip = '1'.repeat(40)
  const refs = pktLine(`${tip} HEAD\u0000side-band-64k ofs-delta shallow symref=HEAD:refs/heads/main\n`).toString('latin1') +
    pktLine(`${tip} refs/heads/main\n`).toString('latin1')
  // One blob whose header states 300 MiB (type 3; size 0 in the first 4 bits, then 300 MiB >> 4 in 7-bit groups).
  let size = (300 * 1024 * 1024) / 16
  const header = [0xb0]
  while (size > 0) {
    header.push((size & 0x7f) | (size >= 128 ? 0x80 : 0))
    size = Math.floor(size / 128)
  }
  const body = Buffer.concat([Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 1]), Buffer.from(header), deflateSync(Buffer.alloc(1024))])
  const pack = Buffer.concat([body, createHash('sha1').update(body).digest()])
  const fake = await fakeProvider(refs, Buffer.concat([pktLine('NAK\n'), pktLine(Buffer.concat([Buffer.from([1]), pack])), Buffer.from('0000')]))
  t.teardown(async () => { await fake.close() })
  const r = remoteOf('netops/fake', fake.url)
  const target = await emptyCache(r.url)
  const failure = await remote(r, async () => await fetchInto(r, target, { remoteRef: 'refs/heads/main', depth: 1 })).then(() => undefined, (err: unknown) => err)
  t.ok(failure instanceof HttpError && failure.statusCode === 502, String(failure))
  t.equal((failure as HttpError & { code: string }).code, 'GIT_PROVIDER_PACK_TOO_LARGE')
  t.match((failure as Error).message, `an object of ${300 * 1024 * 1024} bytes`)
  t.same((await readdir(path.join(target.gitdir, 'objects', 'pack'))), [], 'nothing written')
})

t.test('a default branch advertised under a name no branch can have is tracked by its commit', async (t) => {
  await server.createRepo('netops/source')
  const source = remoteOf('netops/source')
  const target = await emptyCache(source.url)
  const oid = await serverGit('netops/source', 'rev-parse', 'main')
  // The real objects, but an advertisement naming HEAD's branch "..evil".
  const answer = Buffer.from(await (await fetch(`${server.url}/netops/source.git/git-upload-pack`, {
    method: 'POST',
    headers: { authorization: source.headers().Authorization as string, 'content-type': 'application/x-git-upload-pack-request' },
    body: Buffer.concat([pktLine(`want ${oid} side-band-64k ofs-delta\n`), Buffer.from('0000'), pktLine('done\n')])
  })).arrayBuffer())
  const refs = pktLine(`${oid} HEAD\u0000side-band-64k ofs-delta symref=HEAD:refs/heads/..evil\n`).toString('latin1') +
    pktLine(`${oid} refs/heads/..evil\n`).toString('latin1')
  const fake = await fakeProvider(refs, answer)
  try {
    const r = remoteOf('netops/source', fake.url)
    t.same(await fetchInto(r, target, { remoteRef: 'HEAD' }), { fetchHead: oid })
    t.equal(await cacheGit(target, 'rev-parse', 'refs/remotes/origin/HEAD'), oid)
    t.same(await readdir(path.join(target.gitdir, 'refs', 'remotes', 'origin')), ['HEAD'])
  } finally {
    await fake.close()
  }
})
