import t from 'tap'
import git, { Errors } from 'isomorphic-git'
import http from 'isomorphic-git/http/node'
import fs from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { gitCli, startGitServer } from './fixtures/git-server.js'

const USER = 'netops-bot'
const PASS = 'p@ss:w0rd' // a ':' in the password exercises Basic parsing
const AUTHOR = { name: 'Jane Operator', email: 'jane@example.com' }
const onAuth = () => ({ username: USER, password: PASS })
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

const server = await startGitServer({ username: USER, password: PASS })
t.teardown(() => server.close())
const scratch = await mkdtemp(join(tmpdir(), 'git-server-test-'))
t.teardown(() => rm(scratch, { recursive: true, force: true }))
const newDir = (): Promise<string> => mkdtemp(join(scratch, 'clone-'))

// The rejection of a promise, so its class and fields can be asserted one by one.
async function rejectionOf (p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

async function cloneMain (url: string, dir: string): Promise<void> {
  await git.clone({ fs, http, dir, url, ref: 'main', singleBranch: true, depth: 1, onAuth })
}

async function commitFile (dir: string, filepath: string, content: string, message: string): Promise<string> {
  await mkdir(dirname(join(dir, filepath)), { recursive: true })
  await writeFile(join(dir, filepath), content)
  await git.add({ fs, dir, filepath })
  return git.commit({ fs, dir, message, author: AUTHOR })
}

const subjects = async (repo: string, ref: string): Promise<string[]> =>
  (await gitCli(['--git-dir', server.repoDir(repo), 'log', '--format=%s', ref])).trim().split('\n')
const treeFiles = async (repo: string, ref: string): Promise<string[]> =>
  (await gitCli(['--git-dir', server.repoDir(repo), 'ls-tree', '-r', '--name-only', ref])).trim().split('\n')

await server.createRepo('netops/automation', { files: { 'projects/existing.json': '{"name":"existing"}\n' } })

t.test('plain HTTP: authentication, refs advertisement, missing repository', async (t) => {
  const refs = `${server.repoUrl('netops/automation')}/info/refs?service=git-upload-pack`
  const before = server.requests

  const anonymous = await fetch(refs)
  t.equal(anonymous.status, 401)
  t.equal(anonymous.headers.get('www-authenticate'), 'Basic realm="git"')

  const wrong = await fetch(refs, { headers: { authorization: basic(USER, 'nope') } })
  t.equal(wrong.status, 401)
  const wrongUser = await fetch(refs, { headers: { authorization: basic('mallory', PASS) } })
  t.equal(wrongUser.status, 401)
  const garbage = await fetch(refs, { headers: { authorization: 'Basic !!!' } })
  t.equal(garbage.status, 401)

  const ok = await fetch(refs, { headers: { authorization: basic(USER, PASS) } })
  t.equal(ok.status, 200)
  t.equal(ok.headers.get('content-type'), 'application/x-git-upload-pack-advertisement')
  const body = await ok.text()
  t.match(body, /^001e# service=git-upload-pack\n0000/)
  t.match(body, /refs\/heads\/main/)

  const push = await fetch(`${server.repoUrl('netops/automation')}/info/refs?service=git-receive-pack`, {
    headers: { authorization: basic(USER, PASS) },
  })
  t.equal(push.status, 200, 'receive-pack is enabled')
  await push.text()

  const missing = await fetch(`${server.repoUrl('netops/nothing-here')}/info/refs?service=git-upload-pack`, {
    headers: { authorization: basic(USER, PASS) },
  })
  t.equal(missing.status, 404, 'http-backend answers 404 for a missing repository')
  await missing.text()

  const badEncoding = await fetch(`${server.url}/%E0%A4%A/info/refs`, { headers: { authorization: basic(USER, PASS) } })
  t.equal(badEncoding.status, 400)
  await badEncoding.text()

  t.equal(server.requests - before, 8, 'every request is counted')
  const log = server.requestLog.slice(before)
  t.same(
    log.map((r) => r.status),
    [401, 401, 401, 401, 200, 200, 404, 400]
  )
  t.equal(log[4]?.user, USER, 'the authenticated user is recorded')
  t.equal(log[0]?.user, undefined)
})

t.test('isomorphic-git: clone, commit, push to main and to a new branch', async (t) => {
  const repo = 'netops/automation'
  const dir = await newDir()
  await cloneMain(server.repoUrl(repo), dir)
  t.equal(await readFile(join(dir, 'README.md'), 'utf8'), '# netops/automation\n')
  t.equal(await readFile(join(dir, 'projects/existing.json'), 'utf8'), '{"name":"existing"}\n')

  const content = `${JSON.stringify({ name: 'site-a' }, null, 2)}\n`
  const oid = await commitFile(dir, 'projects/site-a.json', content, 'Add project site-a')
  const before = server.requests
  const pushed = await git.push({ fs, http, dir, remoteRef: 'refs/heads/main', onAuth })
  t.equal(pushed.ok, true)
  t.same(pushed.refs['refs/heads/main'], { ok: true, error: '' })
  const pushLog = server.requestLog.slice(before)
  t.ok(
    pushLog.some((r) => r.method === 'POST' && r.path.endsWith('/git-receive-pack') && r.status === 200 && r.user === USER),
    'the push went through receive-pack as the authenticated user'
  )

  t.same(await subjects(repo, 'main'), ['Add project site-a', 'Initial commit'])
  t.equal((await gitCli(['--git-dir', server.repoDir(repo), 'rev-parse', 'main'])).trim(), oid)
  t.same(await treeFiles(repo, 'main'), ['README.md', 'projects/existing.json', 'projects/site-a.json'])
  t.equal(await gitCli(['--git-dir', server.repoDir(repo), 'show', 'main:projects/site-a.json']), content)
  t.equal(
    (await gitCli(['--git-dir', server.repoDir(repo), 'log', '-1', '--format=%an <%ae>', 'main'])).trim(),
    'Jane Operator <jane@example.com>'
  )

  await commitFile(dir, 'projects/site-b.json', '{}\n', 'Add project site-b')
  const branch = await git.push({ fs, http, dir, remoteRef: 'refs/heads/feature/x', onAuth })
  t.same(branch.refs['refs/heads/feature/x'], { ok: true, error: '' }, 'pushing to a missing branch creates it')
  t.same(await subjects(repo, 'feature/x'), ['Add project site-b', 'Add project site-a', 'Initial commit'])
  t.same(await subjects(repo, 'main'), ['Add project site-a', 'Initial commit'], 'main is unchanged')
})

t.test('isomorphic-git: error classes for credentials, missing repository, branch, server', async (t) => {
  const url = server.repoUrl('netops/automation')

  const before = server.requests
  const wrong = await rejectionOf(
    git.clone({ fs, http, dir: await newDir(), url, onAuth: () => ({ username: USER, password: 'wrong' }) })
  )
  t.ok(wrong instanceof Errors.HttpError, 'wrong password: HttpError')
  t.match(wrong, { code: 'HttpError', data: { statusCode: 401, statusMessage: 'Unauthorized' } })
  t.same(
    server.requestLog.slice(before).map((r) => r.status),
    [401, 401],
    'onAuth costs a first unauthenticated round trip'
  )

  const none = await rejectionOf(git.clone({ fs, http, dir: await newDir(), url }))
  t.ok(none instanceof Errors.HttpError, 'no credentials: HttpError')
  t.match(none, { code: 'HttpError', data: { statusCode: 401 } })

  const withHeader = server.requests
  const dir = await newDir()
  await git.clone({
    fs,
    http,
    dir,
    url,
    ref: 'main',
    singleBranch: true,
    depth: 1,
    headers: { Authorization: basic(USER, PASS) },
  })
  t.same(
    server.requestLog.slice(withHeader).map((r) => r.status),
    [200, 200],
    'an Authorization header up front saves the 401 round trip'
  )

  const missing = await rejectionOf(git.clone({ fs, http, dir: await newDir(), url: server.repoUrl('netops/missing'), onAuth }))
  t.ok(missing instanceof Errors.HttpError, 'missing repository: HttpError')
  t.match(missing, { code: 'HttpError', data: { statusCode: 404, statusMessage: 'Not Found' } })

  const noBranch = await rejectionOf(
    git.clone({ fs, http, dir: await newDir(), url, ref: 'no-such-branch', singleBranch: true, depth: 1, onAuth })
  )
  t.ok(noBranch instanceof Errors.NotFoundError, 'missing branch: NotFoundError')
  t.match(noBranch, { code: 'NotFoundError', data: { what: 'no-such-branch' } })

  const unreachable = await rejectionOf(git.clone({ fs, http, dir: await newDir(), url: 'http://127.0.0.1:1/x.git', onAuth }))
  t.match(unreachable, { code: 'ECONNREFUSED' }, 'unreachable server: a plain Node network error')
  t.notOk(unreachable instanceof Errors.HttpError, 'not an HttpError: the route must map it separately')
})

t.test('push rejected when the branch moved, then pushed again on the new tip', async (t) => {
  const repo = 'netops/race'
  await server.createRepo(repo)
  const url = server.repoUrl(repo)
  const a = await newDir()
  const b = await newDir()
  await cloneMain(url, a)
  await cloneMain(url, b)

  await commitFile(a, 'a.json', '{"a":1}\n', 'Add project a')
  await git.push({ fs, http, dir: a, remoteRef: 'refs/heads/main', onAuth })

  await commitFile(b, 'b.json', '{"b":1}\n', 'Add project b')
  const rejected = await rejectionOf(git.push({ fs, http, dir: b, remoteRef: 'refs/heads/main', onAuth }))
  t.ok(rejected instanceof Errors.PushRejectedError, 'PushRejectedError, decided by the client')
  t.match(rejected, { code: 'PushRejectedError', data: { reason: 'not-fast-forward' } })
  t.same(await subjects(repo, 'main'), ['Add project a', 'Initial commit'])

  // Retry the way the route will: fetch the new tip, move the branch there, redo the change.
  const { fetchHead } = await git.fetch({ fs, http, dir: b, ref: 'main', singleBranch: true, depth: 1, onAuth })
  t.ok(fetchHead)
  await git.writeRef({ fs, dir: b, ref: 'refs/heads/main', value: fetchHead!, force: true })
  await git.checkout({ fs, dir: b, ref: 'main', force: true })
  t.equal(await readFile(join(b, 'a.json'), 'utf8'), '{"a":1}\n')
  await commitFile(b, 'b.json', '{"b":1}\n', 'Add project b')
  const retried = await git.push({ fs, http, dir: b, remoteRef: 'refs/heads/main', onAuth })
  t.equal(retried.ok, true)
  t.same(await subjects(repo, 'main'), ['Add project b', 'Add project a', 'Initial commit'])
  t.same(await treeFiles(repo, 'main'), ['README.md', 'a.json', 'b.json'])
})

t.test('a refusal by the server surfaces as GitPushError with per-ref detail', async (t) => {
  const repo = 'netops/guarded'
  await server.createRepo(repo)
  const hook = join(server.repoDir(repo), 'hooks', 'pre-receive')
  await writeFile(hook, '#!/bin/sh\necho "policy: branch is frozen" >&2\nexit 1\n')
  await chmod(hook, 0o755)

  const dir = await newDir()
  await cloneMain(server.repoUrl(repo), dir)
  await commitFile(dir, 'x.json', '{}\n', 'Add project x')
  const messages: string[] = []
  const err = await rejectionOf(
    git.push({ fs, http, dir, remoteRef: 'refs/heads/main', onAuth, onMessage: (m) => { messages.push(m) } })
  )
  t.ok(err instanceof Errors.GitPushError, 'GitPushError')
  t.match(err, {
    code: 'GitPushError',
    data: { result: { ok: true, refs: { 'refs/heads/main': { ok: false, error: 'pre-receive hook declined' } } } },
  })
  t.ok(
    messages.some((m) => m.includes('policy: branch is frozen')),
    'the hook output reaches onMessage'
  )
  t.same(await subjects(repo, 'main'), ['Initial commit'])
})

t.test('git CLI over HTTP: protocol v2 clone, gzip request bodies, push', async (t) => {
  const repo = 'netops/cli'
  await server.createRepo(repo, { files: { 'projects/one.json': '{}\n' } })
  const auth = ['-c', `http.extraHeader=Authorization: ${basic(USER, PASS)}`]
  const identity = ['-c', 'user.name=CLI User', '-c', 'user.email=cli@example.com']
  const work = join(await newDir(), 'work')
  await gitCli([...auth, '-c', 'protocol.version=2', 'clone', '-q', server.repoUrl(repo), work])
  t.equal(await readFile(join(work, 'projects/one.json'), 'utf8'), '{}\n')

  // Many local-only commits make the fetch negotiation body large enough for the CLI to gzip it
  // (over 1 KiB). Dated in the future so the negotiation walks them before any common commit.
  await gitCli(['checkout', '-q', '-b', 'local'], { cwd: work })
  const future = Math.floor(Date.now() / 1000) + 86_400
  for (let i = 0; i < 60; i++) {
    const date = `@${future + i} +0000`
    await gitCli([...identity, 'commit', '-q', '--allow-empty', '-m', `local ${i}`], {
      cwd: work,
      env: { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
    })
  }
  const other = await newDir()
  await cloneMain(server.repoUrl(repo), other)
  await commitFile(other, 'projects/two.json', '{}\n', 'Add project two')
  await git.push({ fs, http, dir: other, remoteRef: 'refs/heads/main', onAuth })

  const before = server.requests
  await gitCli([...auth, 'fetch', '-q', 'origin'], { cwd: work })
  t.ok(
    server.requestLog.slice(before).some((r) => r.contentEncoding === 'gzip' && r.status === 200),
    'a gzip-encoded upload-pack request was served'
  )
  t.equal(
    (await gitCli(['log', '-1', '--format=%s', 'origin/main'], { cwd: work })).trim(),
    'Add project two'
  )

  await gitCli(['checkout', '-q', '-b', 'cli-branch', 'origin/main'], { cwd: work })
  await writeFile(join(work, 'projects/three.json'), '{}\n')
  await gitCli(['add', '-A'], { cwd: work })
  await gitCli([...identity, 'commit', '-q', '-m', 'Add project three'], { cwd: work })
  await gitCli([...auth, 'push', '-q', 'origin', 'cli-branch'], { cwd: work })
  t.same(await subjects(repo, 'cli-branch'), ['Add project three', 'Add project two', 'Initial commit'])
})

t.test('a server without credentials still accepts pushes', async (t) => {
  const open = await startGitServer()
  t.teardown(() => open.close())
  await open.createRepo('solo', { branch: 'trunk', files: { 'a/b/c.txt': 'c\n' } })
  const dir = await newDir()
  await git.clone({ fs, http, dir, url: open.repoUrl('solo'), ref: 'trunk', singleBranch: true, depth: 1 })
  t.equal(await readFile(join(dir, 'a/b/c.txt'), 'utf8'), 'c\n')
  await commitFile(dir, 'd.txt', 'd\n', 'Add d')
  await git.push({ fs, http, dir, remoteRef: 'refs/heads/trunk' })
  const out = await gitCli(['--git-dir', open.repoDir('solo'), 'log', '--format=%s', 'trunk'])
  t.same(out.trim().split('\n'), ['Add d', 'Initial commit'])
  t.equal(
    (await gitCli(['--git-dir', open.repoDir('solo'), 'symbolic-ref', 'HEAD'])).trim(),
    'refs/heads/trunk',
    'the given branch is the default branch'
  )
  t.ok(open.requestLog.every((r) => r.user === undefined))
  await t.rejects(open.createRepo('solo'), /already exists/, 'an existing repository is not overwritten')
})

t.test('large repositories for benchmarks', async (t) => {
  let start = performance.now()
  await server.makeLargeRepo('bench/medium', { files: 1000, commits: 200 })
  const made = performance.now() - start
  t.equal((await gitCli(['--git-dir', server.repoDir('bench/medium'), 'rev-list', '--count', 'main'])).trim(), '200')
  const files = await treeFiles('bench/medium', 'main')
  t.equal(files.length, 1001)
  t.ok(files.includes('dir-009/file-00999.json'))
  t.same(
    (await gitCli(['--git-dir', server.repoDir('bench/medium'), 'fsck', '--connectivity-only'])).trim(),
    '',
    'the repository is consistent'
  )

  start = performance.now()
  const dir = await newDir()
  await cloneMain(server.repoUrl('bench/medium'), dir)
  const cloned = performance.now() - start
  t.equal((await readdir(join(dir, 'dir-000'))).length, 100)
  const first = JSON.parse(await readFile(join(dir, 'dir-000/file-00000.json'), 'utf8')) as { revision: number }
  t.equal(first.revision, 2, 'later commits changed the files')
  t.comment(`1,000 files / 200 commits: created in ${made.toFixed(0)} ms, isomorphic-git clone --depth 1 in ${cloned.toFixed(0)} ms`)

  start = performance.now()
  await server.makeLargeRepo('bench/large', { files: 10_000, commits: 20 })
  const madeLarge = performance.now() - start
  t.equal((await treeFiles('bench/large', 'main')).length, 10_001)
  t.ok(madeLarge < 30_000, 'ten thousand files take seconds')
  t.comment(`10,000 files / 20 commits: created in ${madeLarge.toFixed(0)} ms`)

  await t.rejects(server.makeLargeRepo('bench/bad', { files: 1, commits: 0 }), /commits >= 1/)
})

t.test('close() stops the server and removes the root it created', async (t) => {
  const temp = await startGitServer()
  await temp.createRepo('r')
  await temp.close()
  await t.rejects(stat(temp.root), { code: 'ENOENT' })
  await t.rejects(fetch(`${temp.url}/r.git/info/refs?service=git-upload-pack`))

  const kept = await mkdtemp(join(scratch, 'root-'))
  const given = await startGitServer({ root: kept })
  await given.createRepo('r')
  await given.close()
  t.ok((await stat(join(kept, 'r.git'))).isDirectory(), 'a root passed in is left in place')
})
