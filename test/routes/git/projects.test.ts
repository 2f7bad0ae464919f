// Project files on a real `git http-backend`: initialize, update, caches, providers that fail.
// Long because its cases share one Git server and the apps built on it; split, each part would start its own.
import t, { type Test } from 'tap'
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createServer as createHttpServer } from 'node:http'
import { createServer as createTcpServer, type Socket } from 'node:net'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { gitCli, startGitServer } from '../../fixtures/git-server.js'
import { MAX_CACHE_COMMITS, MAX_CACHE_PACKS } from '../../../plugins/git/cache.js'
import { MAX_PUSH_ATTEMPTS } from '../../../plugins/git/commits.js'
import { adminAuth, buildTestApp, captureLogs, createTestDatabase, createUser, testDatabases, type TestApp, type TestDatabase } from '../../helper.js'

const USER = 'netops-bot'
const TOKEN = 'glpat-Secret-Token-4f9a2c'
const WRONG_TOKEN = 'glpat-Wrong-Token-77e1d0'
// Every case talks to a real git http-backend (a process per request), on both databases: on a
// busy shared machine this file takes minutes, past the default limit of a test file.
t.setTimeout(600_000)
const server = await startGitServer({ username: USER, password: TOKEN })
t.teardown(async () => { await server.close() })

const github = { url: server.url, username: USER, token: TOKEN }
const providersJson = (extra: Record<string, unknown> = {}): string => JSON.stringify({ GitHub: github, ...extra })

/** The route's URL, every parameter URL-encoded (a '/' becomes %2F). */
function projectUrl (repo: string, branch: string, projectPath: string, gitType = 'GitHub'): string {
  const e = encodeURIComponent
  return `/git/${e(gitType)}/repos/${e(repo)}/branches/${e(branch)}/projects/${e(projectPath)}`
}

const git = async (repo: string, ...args: string[]): Promise<string> =>
  (await gitCli(['--git-dir', server.repoDir(repo), ...args])).trimEnd()
const tip = async (repo: string, ref = 'main'): Promise<string> => await git(repo, 'rev-parse', ref)
const subjects = async (repo: string, ref = 'main'): Promise<string[]> => (await git(repo, 'log', '--format=%s', ref)).split('\n')

/** Requests the fixture received since `from`, as `METHOD service` (discovery) or `METHOD path`. */
function requestsSince (from: number): string[] {
  return server.requestLog.slice(from).map((r) => {
    const service = /service=(git-[a-z-]+)/.exec(r.query)?.[1]
    return `${r.method} ${service ?? r.path.split('/').pop() ?? ''}`
  })
}

/**
 * The service with GitHub pointing at the fixture (and credentials for it), unless `env` says
 * otherwise; on either database (what Git does is the same on both) unless `database` says which.
 */
async function gitApp (t: Test, options: { database?: TestDatabase, env?: Record<string, string>, logStream?: ReturnType<typeof captureLogs> } = {}): Promise<TestApp> {
  return await buildTestApp(t, { database: options.database ?? 'any', env: { GIT_PROVIDERS: providersJson(), ...options.env }, logStream: options.logStream })
}

/** A commit made elsewhere (the git CLI in a clone of its own), as another writer would. */
async function pushFromElsewhere (repo: string, change: (work: string) => Promise<void>, message: string): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'other-writer-'))
  try {
    const auth = `http.extraHeader=Authorization: Basic ${Buffer.from(`${USER}:${TOKEN}`).toString('base64')}`
    await gitCli(['-c', auth, 'clone', '-q', '--depth', '1', server.repoUrl(repo), work])
    await change(work)
    await gitCli(['add', '-A'], { cwd: work })
    await gitCli(['-c', 'user.name=Other', '-c', 'user.email=other@example.com', 'commit', '-q', '-m', message], { cwd: work })
    await gitCli(['-c', auth, 'push', '-q', 'origin', 'HEAD:main'], { cwd: work })
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/**
 * A provider in front of the fixture that runs `beforePush` before passing on each push: the
 * place to make another writer win the race between our look at the branch and our push.
 */
async function racingProvider (t: Test, beforePush: () => Promise<'forward' | number>): Promise<string> {
  const proxy = createHttpServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        try {
          const action = req.method === 'POST' && req.url?.endsWith('/git-receive-pack') === true ? await beforePush() : 'forward'
          if (action !== 'forward') {
            res.writeHead(action, { 'content-type': 'text/plain' }).end('refused by the proxy')
            return
          }
          const headers: Record<string, string> = {}
          for (const name of ['authorization', 'content-type', 'accept', 'user-agent', 'content-encoding', 'git-protocol']) {
            const value = req.headers[name]
            if (typeof value === 'string') headers[name] = value
          }
          const upstream = await fetch(`${server.url}${req.url ?? '/'}`, {
            method: req.method, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined
          })
          res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' })
          res.end(Buffer.from(await upstream.arrayBuffer()))
        } catch (err) {
          res.writeHead(500).end(String(err))
        }
      })()
    })
  })
  proxy.listen(0, '127.0.0.1')
  await once(proxy, 'listening')
  t.teardown(async () => { await new Promise<void>((resolve) => proxy.close(() => { resolve() })) })
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
}

const app = await gitApp(t, { database: await createTestDatabase(t, 'embedded', { migrated: true }) })
const ann = await createUser(app, { username: 'ann', roles: ['designer'], email: 'ann@example.com' })

t.test('initializes a project: the file, the commit, the response, and no clone the second time', async (t) => {
  const repo = 'netops/automation'
  await server.createRepo(repo, { files: { 'projects/existing.json': '{"name":"existing"}\n' } })
  const before = await tip(repo)
  const project = { name: 'site-a', devices: ['r1', 'r2'], meta: { vendor: 'cisco', count: 2 } }

  const first = await app.inject({
    method: 'POST',
    url: projectUrl(repo, 'main', 'projects/site-a.json'),
    headers: { authorization: ann },
    payload: { project, commitMessage: 'Add site-a\r\n\r\nFor the pilot.  \n\n' }
  })
  t.equal(first.statusCode, 200, first.body)
  t.same(first.json(), { message: 'Successfully initialized project', data: project })

  t.equal(await git(repo, 'show', 'main:projects/site-a.json') + '\n', `${JSON.stringify(project, null, 2)}\n`)
  t.equal(await git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%P', 'main'), `ann <ann@example.com>|ann <ann@example.com>|${before}`)
  t.equal(await git(repo, 'log', '-1', '--format=%B', 'main'), 'Add site-a\n\nFor the pilot.', 'message cleaned like git does')
  t.same((await git(repo, 'ls-tree', '-r', '--name-only', 'main')).split('\n'),
    ['README.md', 'projects/existing.json', 'projects/site-a.json'], 'other files untouched')
  t.equal(await git(repo, 'fsck', '--strict', '--no-progress'), '', 'the repository is consistent')

  const cache = path.join(app.config.DATA_DIR, 'git', 'github', 'netops%2Fautomation.git')
  t.ok((await stat(path.join(cache, 'objects'))).isDirectory(), 'a bare cache under DATA_DIR/git/<provider>/')

  const mark = server.requests
  const second = await app.inject({
    method: 'POST',
    url: projectUrl(repo, 'main', 'projects/site-b.json'),
    headers: { authorization: adminAuth }
  })
  t.equal(second.statusCode, 200, second.body)
  t.same(second.json().data, {}, 'no project: an empty object')
  t.same(requestsSince(mark), ['POST git-receive-pack'],
    'a warm cache pushes straight away: no clone, nothing fetched, no advertisement (the capabilities are known)')
  t.equal(await git(repo, 'show', 'main:projects/site-b.json'), '{}')
  t.equal(await git(repo, 'log', '-1', '--format=%an <%ae>|%s', 'main'),
    'admin <admin@users.noreply.invalid>|Initialize project projects/site-b.json', 'default message; fallback email')
  t.same(await subjects(repo), ['Initialize project projects/site-b.json', 'Add site-a', 'Initial commit'])
})

t.test('encoded slashes and characters in every parameter; a missing branch starts from the default branch', async (t) => {
  const repo = 'netops/dc-east/branches'
  await server.createRepo(repo, { branch: 'trunk' })
  const trunk = await tip(repo, 'trunk')

  const url = projectUrl(repo, 'feature/site-a', 'projects/east/site a €.json', 'github')
  t.match(url, /netops%2Fdc-east%2Fbranches\/branches\/feature%2Fsite-a\/projects\/projects%2Feast%2Fsite%20a%20%E2%82%AC\.json$/)
  const created = await app.inject({ method: 'POST', url, headers: { authorization: ann }, payload: { project: { name: 'east' } } })
  t.equal(created.statusCode, 200, created.body)
  t.equal(await git(repo, 'log', '-1', '--format=%P', 'feature/site-a'), trunk, 'the new branch starts at the default branch')
  t.equal(await tip(repo, 'trunk'), trunk, 'the default branch is unchanged')
  t.equal(await git(repo, 'show', 'feature/site-a:projects/east/site a €.json'), '{\n  "name": "east"\n}')

  const next = await app.inject({
    method: 'POST', url: projectUrl(repo, 'feature/site-a', 'projects/east/other.json'), headers: { authorization: ann }, payload: {}
  })
  t.equal(next.statusCode, 200, next.body)
  t.same(await subjects(repo, 'feature/site-a'),
    ['Initialize project projects/east/other.json', 'Initialize project projects/east/site a €.json', 'Initial commit'])
})

t.test('a repository path longer than a file name gets a cache all the same', async (t) => {
  const repo = ['a'.repeat(150), 'b'.repeat(150), 'c'.repeat(150)].join('/')
  await server.createRepo(repo)
  for (const file of ['one.json', 'two.json']) {
    const response = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', file), headers: { authorization: ann }, payload: {} })
    t.equal(response.statusCode, 200, response.body)
  }
  t.equal(await git(repo, 'rev-list', '--count', 'main'), '3')
  const caches = await readdir(path.join(app.config.DATA_DIR, 'git', 'github'))
  t.ok(caches.some((name) => name.startsWith('a'.repeat(150)) && name.length <= 255), 'a shortened, digested name')
})

t.test('an empty repository gets its first commit', async (t) => {
  const repo = 'netops/empty'
  await gitCli(['init', '-q', '--bare', '--initial-branch=main', server.repoDir(repo)])
  const response = await app.inject({
    method: 'POST', url: projectUrl(repo, 'main', 'project.json'), headers: { authorization: ann }, payload: { project: { a: 1 } }
  })
  t.equal(response.statusCode, 200, response.body)
  t.equal(await git(repo, 'rev-list', '--count', 'main'), '1')
  t.equal(await git(repo, 'log', '-1', '--format=%P', 'main'), '', 'a root commit')
  t.equal(await git(repo, 'ls-tree', '-r', '--name-only', 'main'), 'project.json')
})

t.test('a path that is taken is a 409, and nothing is pushed', async (t) => {
  const repo = 'netops/taken'
  await server.createRepo(repo, { files: { 'projects/existing.json': '{}\n' } })
  const before = await tip(repo)
  const cases: Array<[string, RegExp]> = [
    ['projects/existing.json', /^projects\/existing\.json already exists on branch main of repository netops\/taken$/],
    ['projects', /^projects already exists as a directory/],
    ['README.md/x.json', /^README\.md already exists and is not a directory/]
  ]
  for (const [projectPath, message] of cases) {
    const mark = server.requests
    const response = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', projectPath), headers: { authorization: ann }, payload: {} })
    t.equal(response.statusCode, 409, projectPath)
    t.match(response.json(), { statusCode: 409, error: 'Conflict', code: 'GIT_PROJECT_EXISTS', message })
    t.notOk(requestsSince(mark).includes('POST git-receive-pack'), `${projectPath}: no push`)
  }
  t.equal(await tip(repo), before, 'the branch did not move')
})

t.test('the cache is only trusted as far as the provider agrees', async (t) => {
  const repo = 'netops/moving'
  // Enough files that their tree, fetched again, would be several times the bound on a pack
  // that holds one new commit (asserted below); each writer elsewhere checks them all out.
  await server.makeLargeRepo(repo, { files: 300, commits: 5 })
  const ok = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'projects/one.json'), headers: { authorization: ann }, payload: {} })
  t.equal(ok.statusCode, 200, ok.body)
  const cache = path.join(app.config.DATA_DIR, 'git', 'github', 'netops%2Fmoving.git')
  const packsBefore = new Set(await readdir(path.join(cache, 'objects', 'pack')))
  let firstFetch = 0
  for (const f of packsBefore) if (f.endsWith('.pack')) firstFetch += (await stat(path.join(cache, 'objects', 'pack', f))).size
  t.ok(firstFetch > 4 * 4096, `the first fetch, the whole tree, is far past 4,096 bytes (${firstFetch} bytes)`)

  t.test('another writer moved the branch: an incremental fetch, then the commit on the new tip', async (t) => {
    await pushFromElsewhere(repo, async (work) => { await writeFile(path.join(work, 'elsewhere.json'), '{}\n') }, 'Commit from elsewhere')
    const moved = await tip(repo)
    const mark = server.requests
    const response = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'projects/two.json'), headers: { authorization: ann }, payload: {} })
    t.equal(response.statusCode, 200, response.body)
    t.equal(await git(repo, 'log', '-1', '--format=%P', 'main'), moved, 'committed on the new tip')
    t.same(requestsSince(mark), [
      'POST git-receive-pack', // on the cached tip: the server refuses it, the branch is elsewhere
      'GET git-receive-pack', // the branch's tip: it moved
      'GET git-upload-pack', 'POST git-upload-pack', // fetch
      'POST git-receive-pack'
    ])
    const added = (await readdir(path.join(cache, 'objects', 'pack'))).filter((f) => f.endsWith('.pack') && !packsBefore.has(f))
    t.equal(added.length, 1, 'one pack fetched')
    const size = (await stat(path.join(cache, 'objects', 'pack', added[0] as string))).size
    t.ok(size < 4096, `the fetched pack holds the new commit, not the 300-file tree again (${size} bytes)`)
    t.equal(await git(repo, 'rev-list', '--count', '--min-parents=2', 'main'), '0', 'linear history')
  })

  t.test('taken on the provider but not in the cache: 409', async (t) => {
    await pushFromElsewhere(repo, async (work) => { await writeFile(path.join(work, 'projects', 'three.json'), '{}\n') }, 'Add three elsewhere')
    const before = await tip(repo)
    const response = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'projects/three.json'), headers: { authorization: ann }, payload: {} })
    t.equal(response.statusCode, 409, response.body)
    t.equal(await tip(repo), before)
  })

  t.test('taken in the cache but removed on the provider since: the file is written', async (t) => {
    await pushFromElsewhere(repo, async (work) => { await rm(path.join(work, 'projects', 'one.json')) }, 'Remove one elsewhere')
    const removed = await tip(repo)
    const response = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'projects/one.json'), headers: { authorization: ann }, payload: { project: { again: true } } })
    t.equal(response.statusCode, 200, response.body)
    t.equal(await git(repo, 'log', '-1', '--format=%P', 'main'), removed)
    t.equal(await git(repo, 'show', 'main:projects/one.json'), '{\n  "again": true\n}')
  })

  // A warm update sends its push without looking at the branch first: the server's check of the
  // old id is what keeps a commit made meanwhile.
  t.test('an update pushed on the cached tip after another writer moved the branch: theirs kept, ours on top', async (t) => {
    await pushFromElsewhere(repo, async (work) => { await writeFile(path.join(work, 'projects', 'four.json'), '{"by":"other"}\n') }, 'Add four elsewhere')
    const theirs = await tip(repo)
    const mark = server.requests
    const response = await app.inject({
      method: 'PUT', url: projectUrl(repo, 'main', 'projects/one.json'), headers: { authorization: ann }, payload: { project: { updated: true } }
    })
    t.equal(response.statusCode, 200, response.body)
    t.same(requestsSince(mark), [
      'POST git-receive-pack', // on the cached tip, no advertisement before it: the server refuses it
      'GET git-receive-pack', // the branch's tip: it moved
      'GET git-upload-pack', 'POST git-upload-pack', // fetch
      'POST git-receive-pack'
    ])
    t.equal(await git(repo, 'log', '-1', '--format=%P', 'main'), theirs, 'ours on top of theirs')
    t.equal(await git(repo, 'show', 'main:projects/four.json'), '{"by":"other"}', 'their file kept')
    t.equal(await git(repo, 'show', 'main:projects/one.json'), '{\n  "updated": true\n}')
    t.equal(await git(repo, 'rev-list', '--count', '--min-parents=2', 'main'), '0', 'linear history')
  })

  t.test('an update equal to the cached file but not to the provider\'s: committed, not "unchanged"', async (t) => {
    await pushFromElsewhere(repo, async (work) => { await writeFile(path.join(work, 'projects', 'one.json'), '{"changed":"elsewhere"}\n') }, 'Change one elsewhere')
    const theirs = await tip(repo)
    const response = await app.inject({
      method: 'PUT', url: projectUrl(repo, 'main', 'projects/one.json'), headers: { authorization: ann }, payload: { project: { updated: true } }
    })
    t.equal(response.statusCode, 200, response.body)
    t.equal(response.json().message, 'Successfully updated project')
    t.equal(await git(repo, 'log', '-1', '--format=%P', 'main'), theirs)
    t.equal(await git(repo, 'show', 'main:projects/one.json'), '{\n  "updated": true\n}')
  })

  t.test('an update equal to the provider\'s file but not to the cached one: "unchanged", nothing committed', async (t) => {
    const document = { changed: 'elsewhere again' }
    await pushFromElsewhere(repo, async (work) => { await writeFile(path.join(work, 'projects', 'one.json'), `${JSON.stringify(document, null, 2)}\n`) }, 'Change one elsewhere again')
    const theirs = await tip(repo)
    const response = await app.inject({
      method: 'PUT', url: projectUrl(repo, 'main', 'projects/one.json'), headers: { authorization: ann }, payload: { project: document }
    })
    t.equal(response.statusCode, 200, response.body)
    t.equal(response.json().message, 'Project unchanged: nothing committed')
    t.equal(response.headers.etag, `"${await git(repo, 'rev-parse', 'main:projects/one.json')}"`, 'the ETag of the provider\'s file')
    t.equal(await tip(repo), theirs, 'no commit')
  })
})

t.test('bad input is a 400 naming the problem, and nothing reaches the provider', async (t) => {
  const repo = 'netops/automation'
  const mark = server.requests
  const before = await tip(repo)
  const cases: Array<{ url: string, payload?: unknown, message: RegExp }> = [
    { url: projectUrl(repo, 'main', 'p.json', 'Bitbucket'), message: /^Unknown Git provider "Bitbucket"; configured: GitHub, GitLab$/ },
    { url: projectUrl('netops/../etc', 'main', 'p.json'), message: /^repoPath must not contain '\.' or '\.\.' segments/ },
    { url: projectUrl('netops/auto mation', 'main', 'p.json'), message: /^repoPath segments may only contain/ },
    { url: projectUrl('', 'main', 'p.json'), message: /^repoPath must not be empty/ },
    { url: projectUrl(repo, 'bad..name', 'p.json'), message: /^branchName must not contain '\.\.'/ },
    { url: projectUrl(repo, 'HEAD', 'p.json'), message: /^branchName must not be 'HEAD'/ },
    { url: projectUrl(repo, '-f', 'p.json'), message: /^branchName must not start with '-'/ },
    { url: projectUrl(repo, 'feature/x.lock', 'p.json'), message: /^branchName segments must not end with '\.lock'/ },
    { url: projectUrl(repo, 'main', ''), message: /^projectPath must not be empty/ },
    { url: projectUrl(repo, 'main', '/etc/passwd'), message: /^projectPath must be relative/ },
    { url: projectUrl(repo, 'main', '../outside.json'), message: /^projectPath must not contain '\.\.' segments/ },
    { url: projectUrl(repo, 'main', 'projects/../../x.json'), message: /^projectPath must not contain '\.\.' segments/ },
    { url: projectUrl(repo, 'main', '.git/config'), message: /^projectPath must not point into '\.git'/ },
    { url: projectUrl(repo, 'main', 'sub/.GIT/hooks/x'), message: /^projectPath must not point into '\.git'/ },
    { url: projectUrl(repo, 'main', 'x'.repeat(1100)), message: /^projectPath must be at most 1024 bytes/ },
    { url: projectUrl(repo, 'main', 'p.json'), payload: { project: [1, 2] }, message: /project/ },
    { url: projectUrl(repo, 'main', 'p.json'), payload: { project: 'text' }, message: /project/ },
    { url: projectUrl(repo, 'main', 'p.json'), payload: { project: null }, message: /project/ },
    { url: projectUrl(repo, 'main', 'p.json'), payload: { project: {}, extra: 1 }, message: /additional/ },
    { url: projectUrl(repo, 'main', 'p.json'), payload: { commitMessage: '' }, message: /commitMessage/ },
    { url: projectUrl(repo, 'main', 'p.json'), payload: { commitMessage: 42 }, message: /commitMessage/ },
    { url: projectUrl(repo, 'main', 'p.json'), payload: { commitMessage: ' \n\t ' }, message: /^commitMessage must not be blank$/ },
    { url: projectUrl(repo, 'main', 'p.json'), payload: { commitMessage: 'a\u0000b' }, message: /^body\/commitMessage contains a NUL character/ },
    { url: projectUrl(repo, 'main', 'p.json'), payload: { commitMessage: 'x'.repeat(10_001) }, message: /commitMessage/ }
  ]
  for (const c of cases) {
    const response = await app.inject({ method: 'POST', url: c.url, headers: { authorization: ann }, payload: c.payload as object ?? {} })
    t.equal(response.statusCode, 400, `${c.url.slice(0, 100)} ${JSON.stringify(c.payload ?? {}).slice(0, 60)}`)
    t.match(response.json(), { statusCode: 400, error: 'Bad Request', message: c.message })
  }
  const malformed = await app.inject({
    method: 'POST', url: projectUrl(repo, 'main', 'p.json'), headers: { authorization: ann, 'content-type': 'application/json' }, payload: '{"project":'
  })
  t.equal(malformed.statusCode, 400)
  const tooLong = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'x'.repeat(2049)), headers: { authorization: ann }, payload: {} })
  t.equal(tooLong.statusCode, 414, 'past the router\'s limit on a decoded parameter')
  const unencoded = await app.inject({ method: 'POST', url: '/git/GitHub/repos/netops/automation/branches/main/projects/p.json', headers: { authorization: ann }, payload: {} })
  t.equal(unencoded.statusCode, 404, 'slashes must be encoded for the route to match')
  t.same(requestsSince(mark), [], 'the provider was not contacted')
  t.equal(await tip(repo), before)
})

t.test('callers: 401 without credentials, 403 without a writer role', async (t) => {
  const mark = server.requests
  const url = projectUrl('netops/automation', 'main', 'projects/roles.json')
  const anonymous = await app.inject({ method: 'POST', url, payload: {} })
  t.equal(anonymous.statusCode, 401)
  t.match(anonymous.headers['www-authenticate'], /^Basic realm="netauto"/)
  const reader = await createUser(app, { username: 'reader' })
  const forbidden = await app.inject({ method: 'POST', url, headers: { authorization: reader }, payload: {} })
  t.equal(forbidden.statusCode, 403)
  t.match(forbidden.json().message, /designer/)
  const apiwrite = await createUser(app, { username: 'robot', roles: ['apiwrite'] })
  const allowed = await app.inject({ method: 'POST', url, headers: { authorization: apiwrite }, payload: {} })
  t.equal(allowed.statusCode, 200, 'apiwrite may')
  t.same(requestsSince(mark), ['POST git-receive-pack'], 'only the allowed request reached the provider')
})

t.test('provider failures name the provider and repository, never the token', async (t) => {
  // Accepts connections and never answers.
  const sockets = new Set<Socket>()
  const silent = createTcpServer((socket) => { sockets.add(socket) })
  silent.listen(0, '127.0.0.1')
  await once(silent, 'listening')
  // Answers every request with a web page, as a misconfigured URL would.
  const web = createHttpServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<html>hello</html>') })
  web.listen(0, '127.0.0.1')
  await once(web, 'listening')
  // A port nothing listens on.
  const closed = createTcpServer()
  closed.listen(0, '127.0.0.1')
  await once(closed, 'listening')
  const closedPort = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => { resolve() }))
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => silent.close(() => { resolve() }))
    await new Promise<void>((resolve) => web.close(() => { resolve() }))
  })

  const broken = await racingProvider(t, async () => 500)
  const logs = captureLogs()
  const logged = await gitApp(t, {
    env: {
      LOG_LEVEL: 'debug',
      GIT_PROVIDERS: providersJson({
        Broken: { url: broken, username: USER, token: TOKEN },
        BadCreds: { url: server.url, username: USER, token: WRONG_TOKEN },
        Anonymous: { url: server.url },
        Down: { url: `http://127.0.0.1:${closedPort}`, token: TOKEN },
        Silent: { url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, token: TOKEN, timeoutMs: 300 },
        Web: { url: `http://127.0.0.1:${(web.address() as AddressInfo).port}`, token: TOKEN }
      })
    },
    logStream: logs
  })

  const repo = 'netops/guarded'
  await server.createRepo(repo)
  const hook = path.join(server.repoDir(repo), 'hooks', 'pre-receive')
  await writeFile(hook, '#!/bin/sh\necho "policy: branch is frozen" >&2\nexit 1\n')
  await chmod(hook, 0o755)
  const before = await tip(repo)

  const cases: Array<{ gitType: string, repo: string, status: number, code: string, message: RegExp }> = [
    { gitType: 'GitHub', repo: 'netops/missing', status: 404, code: 'GIT_REPOSITORY_NOT_FOUND', message: /^Repository netops\/missing not found on Git provider GitHub$/ },
    { gitType: 'BadCreds', repo, status: 502, code: 'GIT_PROVIDER_AUTH', message: /^Git provider BadCreds refused the configured credentials for repository netops\/guarded/ },
    { gitType: 'anonymous', repo, status: 502, code: 'GIT_PROVIDER_AUTH', message: /^Git provider Anonymous asks for credentials for repository netops\/guarded and none are configured/ },
    { gitType: 'Down', repo, status: 502, code: 'GIT_PROVIDER_UNREACHABLE', message: /^Git provider Down is unreachable \(ECONNREFUSED\) for repository netops\/guarded$/ },
    { gitType: 'Silent', repo, status: 504, code: 'GIT_PROVIDER_TIMEOUT', message: /^Git provider Silent did not answer within 300 ms for repository netops\/guarded$/ },
    { gitType: 'Web', repo, status: 502, code: 'GIT_PROVIDER_ERROR', message: /^Git provider Web did not answer as a Git smart HTTP server for repository netops\/guarded$/ },
    { gitType: 'Broken', repo, status: 502, code: 'GIT_PROVIDER_ERROR', message: /^Git provider Broken answered HTTP 500 for repository netops\/guarded$/ },
    { gitType: 'GitHub', repo, status: 502, code: 'GIT_PUSH_REFUSED', message: /^Git provider GitHub refused the push to branch main of repository netops\/guarded: pre-receive hook declined \(.*policy: branch is frozen.*\)$/ }
  ]
  const bodies: string[] = []
  for (const c of cases) {
    const response = await logged.inject({ method: 'POST', url: projectUrl(c.repo, 'main', 'projects/x.json', c.gitType), headers: { authorization: adminAuth }, payload: {} })
    bodies.push(response.body)
    t.equal(response.statusCode, c.status, `${c.gitType}: ${response.body}`)
    t.match(response.json(), { statusCode: c.status, code: c.code, message: c.message }, c.gitType)
  }
  t.equal(await tip(repo), before, 'nothing landed')

  const secrets = [TOKEN, WRONG_TOKEN, Buffer.from(`${USER}:${TOKEN}`).toString('base64'), Buffer.from(`${USER}:${WRONG_TOKEN}`).toString('base64')]
  const logText = logs.lines.join('')
  t.match(logText, /"msg":"request failed"/, 'the failures were logged')
  t.match(logText, /GIT_PROVIDER_AUTH/)
  for (const secret of secrets) {
    t.notOk(logText.includes(secret), 'no token in the logs')
    t.notOk(bodies.some((b) => b.includes(secret)), 'no token in a response')
  }
})

t.test('a damaged cache is detected and rebuilt', async (t) => {
  const logs = captureLogs()
  const own = await gitApp(t, { env: { LOG_LEVEL: 'warn' }, logStream: logs })
  const repo = 'netops/fragile'
  await server.createRepo(repo, { files: { 'a/b/c.json': '{}\n' } })
  const cache = path.join(own.config.DATA_DIR, 'git', 'github', 'netops%2Ffragile.git')
  let n = 0
  const initialize = async () => await own.inject({
    method: 'POST', url: projectUrl(repo, 'main', `a/b/file-${n++}.json`), headers: { authorization: adminAuth }, payload: {}
  })
  t.equal((await initialize()).statusCode, 200)

  const looseObject = async (oid: string) => path.join(cache, 'objects', oid.slice(0, 2), oid.slice(2))
  const damages: Array<[string, () => Promise<void>]> = [
    ['pack files truncated', async () => {
      for (const f of await readdir(path.join(cache, 'objects', 'pack'))) await writeFile(path.join(cache, 'objects', 'pack', f), 'garbage')
    }],
    ['the last commit\'s root tree overwritten', async () => {
      await writeFile(await looseObject(await git(repo, 'rev-parse', 'main^{tree}')), 'not zlib at all')
    }],
    ['a tree replaced by another valid object', async () => {
      const from = await looseObject(await git(repo, 'rev-parse', 'main:a'))
      const blob = await looseObject(await git(repo, 'rev-parse', 'main:a/b/file-2.json'))
      await writeFile(from, await readFile(blob))
    }],
    ['the branch ref pointing at a missing commit', async () => {
      await writeFile(path.join(cache, 'refs', 'remotes', 'origin', 'main'), `${'1'.repeat(40)}\n`)
    }],
    ['HEAD missing (an interrupted start)', async () => { await rm(path.join(cache, 'HEAD')) }],
    ['objects gone', async () => { await rm(path.join(cache, 'objects'), { recursive: true }) }],
    ['the whole cache a file', async () => { await rm(cache, { recursive: true }); await writeFile(cache, 'x') }]
  ]
  for (const [damage, apply] of damages) {
    await apply()
    const before = await tip(repo)
    const response = await initialize()
    t.equal(response.statusCode, 200, `${damage}: ${response.body}`)
    t.equal(await git(repo, 'log', '-1', '--format=%P', 'main'), before, `${damage}: committed on the branch tip`)
  }
  t.equal(await git(repo, 'rev-list', '--count', 'main'), String(damages.length + 2))
  t.equal(await git(repo, 'fsck', '--strict', '--no-progress'), '', 'the repository is consistent')
  t.match(logs.lines.join(''), /Git cache unusable; rebuilding it from the provider/, 'the rebuild was logged')
  t.notOk(logs.lines.join('').includes(TOKEN))
})

t.test('a push that loses the race to another writer is made again on the new tip', async (t) => {
  const repo = 'netops/race'
  await server.createRepo(repo)
  let pushes = 0
  let others = 0
  let othersWin = 1
  const url = await racingProvider(t, async () => {
    pushes++
    if (othersWin-- > 0) {
      others++
      await pushFromElsewhere(repo, async (work) => { await writeFile(path.join(work, `other-${others}.json`), '{}\n') }, `Other writer ${others}`)
    }
    return 'forward'
  })
  const own = await gitApp(t, { env: { GIT_PROVIDERS: providersJson({ Racy: { url, username: USER, token: TOKEN } }) } })
  const initialize = async (file: string) => await own.inject({
    method: 'POST', url: projectUrl(repo, 'main', file, 'Racy'), headers: { authorization: adminAuth }, payload: {}
  })

  const won = await initialize('mine.json')
  t.equal(won.statusCode, 200, won.body)
  t.equal(pushes, 2, 'the first push was refused by the server (the branch had moved), the second landed')
  t.same(await subjects(repo), ['Initialize project mine.json', 'Other writer 1', 'Initial commit'], 'on top of the other writer, linear')

  othersWin = Infinity
  pushes = 0
  const before = await tip(repo)
  const lost = await initialize('never.json')
  t.equal(lost.statusCode, 503, lost.body)
  t.match(lost.json(), { code: 'GIT_BRANCH_BUSY', message: `Branch main of repository netops/race kept moving during ${MAX_PUSH_ATTEMPTS} pushes; try again` })
  t.equal(pushes, MAX_PUSH_ATTEMPTS, 'bounded attempts')
  t.equal(await git(repo, 'rev-list', '--count', `${before}..main`), String(MAX_PUSH_ATTEMPTS), 'only the other writer\'s commits landed')
  t.notOk((await git(repo, 'ls-tree', '--name-only', 'main')).split('\n').includes('never.json'))
})

t.test('a remote\'s receive-pack capabilities are asked for by its first push only; a failed push forgets them', async (t) => {
  const repo = 'netops/capabilities'
  await server.createRepo(repo, { files: { 'p.json': '{}\n' } })
  let failNextPush = false
  const url = await racingProvider(t, async () => {
    if (!failNextPush) return 'forward'
    failNextPush = false
    return 500
  })
  const own = await gitApp(t, { env: { GIT_PROVIDERS: providersJson({ Counted: { url, username: USER, token: TOKEN } }) } })
  const call = async (method: 'POST' | 'PUT', file: string, project: object) => await own.inject({
    method, url: projectUrl(repo, 'main', file, 'Counted'), headers: { authorization: adminAuth }, payload: { project }
  })
  const advertisements = (from: number): number => requestsSince(from).filter((r) => r === 'GET git-receive-pack').length

  let mark = server.requests
  t.equal((await call('POST', 'a.json', { n: 1 })).statusCode, 200)
  t.equal(advertisements(mark), 1, 'the first push asks for the capabilities')

  mark = server.requests
  t.equal((await call('PUT', 'a.json', { n: 2 })).statusCode, 200)
  t.equal((await call('PUT', 'p.json', { n: 3 })).statusCode, 200)
  t.equal((await call('POST', 'b.json', { n: 4 })).statusCode, 200)
  const branch = await own.inject({
    method: 'POST', url: `/git/Counted/repos/${encodeURIComponent(repo)}/branches/feature`, headers: { authorization: adminAuth }, payload: {}
  })
  t.equal(branch.statusCode, 200, branch.body)
  t.equal(advertisements(mark), 0, 'later pushes, updates and a branch creation do not')
  t.equal(requestsSince(mark).filter((r) => r === 'POST git-receive-pack').length, 4, 'one push each')
  t.same(await subjects(repo), ['Initialize project b.json', 'Update project p.json', 'Update project a.json', 'Initialize project a.json', 'Initial commit'])
  t.equal(await tip(repo, 'feature'), await tip(repo), 'the branch made at the tip')

  failNextPush = true
  const failed = await call('PUT', 'a.json', { n: 5 })
  t.equal(failed.statusCode, 502, failed.body)
  mark = server.requests
  t.equal((await call('PUT', 'a.json', { n: 6 })).statusCode, 200)
  t.same(requestsSince(mark), ['GET git-receive-pack', 'POST git-receive-pack'], 'after a failed push, the next one asks again')
  t.equal(await git(repo, 'show', 'main:a.json'), '{\n  "n": 6\n}')
})

t.test('a branch created where the repository has no default branch starts with a first commit', async (t) => {
  const repo = 'netops/headless'
  await server.createRepo(repo, { branch: 'only' })
  await git(repo, 'symbolic-ref', 'HEAD', 'refs/heads/unborn')
  const response = await app.inject({ method: 'POST', url: projectUrl(repo, 'fresh', 'p.json'), headers: { authorization: ann }, payload: {} })
  t.equal(response.statusCode, 200, response.body)
  t.equal(await git(repo, 'rev-list', '--count', 'fresh'), '1')
  t.equal(await git(repo, 'rev-list', '--count', 'only'), '1', 'the other branch is untouched')
})

t.test('a cache grown past its bounds is rebuilt from one shallow fetch', async (t) => {
  const logs = captureLogs()
  const own = await gitApp(t, { env: { LOG_LEVEL: 'info' }, logStream: logs })
  const repo = 'netops/bounded'
  await server.createRepo(repo)
  const cache = path.join(own.config.DATA_DIR, 'git', 'github', 'netops%2Fbounded.git')
  let n = 0
  const initialize = async () => await own.inject({ method: 'POST', url: projectUrl(repo, 'main', `f-${n++}.json`), headers: { authorization: adminAuth }, payload: {} })
  t.equal((await initialize()).statusCode, 200)
  t.equal(await readFile(path.join(cache, 'netauto-commits'), 'utf8'), '1', 'commits made in the cache are counted')

  const grow: Array<[string, () => Promise<void>]> = [
    [`${MAX_CACHE_COMMITS} commits`, async () => { await writeFile(path.join(cache, 'netauto-commits'), String(MAX_CACHE_COMMITS)) }],
    [`${MAX_CACHE_PACKS + 1} packs`, async () => {
      for (let i = 0; i <= MAX_CACHE_PACKS; i++) await writeFile(path.join(cache, 'objects', 'pack', `pack-${String(i).padStart(40, '0')}.idx`), '')
    }]
  ]
  for (const [what, apply] of grow) {
    await apply()
    const mark = server.requests
    const response = await initialize()
    t.equal(response.statusCode, 200, `${what}: ${response.body}`)
    t.same(requestsSince(mark), ['GET git-upload-pack', 'POST git-upload-pack', 'POST git-receive-pack'], `${what}: fetched again`)
    t.equal(await readFile(path.join(cache, 'netauto-commits'), 'utf8'), '1', `${what}: counting starts again`)
  }
  t.equal(logs.lines.filter((line) => line.includes('Git cache rebuilt to bound its size')).length, 2)
})

for (const database of testDatabases) {
  t.test(`concurrent initializations on one branch all land, in a linear history (${database})`, async (t) => {
    const repo = `netops/busy-${database}`
    await server.makeLargeRepo(repo, { files: 200, commits: 3 })
    const db = await createTestDatabase(t, database, { migrated: true })
    const instances = [await gitApp(t, { database: db })]
    // On a server database, a second instance with its own cache: the advisory lock spans both.
    if (database === 'postgres') {
      instances.push(await gitApp(t, { database: db, env: { DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'second-instance-')) } }))
    }
    // Warm every cache so the requests really start together.
    for (const [i, instance] of instances.entries()) {
      const warm = await instance.inject({ method: 'POST', url: projectUrl(repo, 'main', `warm-${i}.json`), headers: { authorization: adminAuth }, payload: {} })
      t.equal(warm.statusCode, 200)
    }
    const before = Number(await git(repo, 'rev-list', '--count', 'main'))
    const responses = await Promise.all(Array.from({ length: 8 }, async (_, i) => await (instances[i % instances.length] as TestApp).inject({
      method: 'POST', url: projectUrl(repo, 'main', `projects/p-${i}.json`), headers: { authorization: adminAuth }, payload: { project: { i } }
    })))
    t.same(responses.map((r) => r.statusCode), Array(8).fill(200), responses.map((r) => r.body).join('\n'))
    t.equal(Number(await git(repo, 'rev-list', '--count', 'main')), before + 8, 'all 8 commits are on the branch')
    t.equal(await git(repo, 'rev-list', '--count', '--min-parents=2', 'main'), '0', 'no merges')
    const parents = (await git(repo, 'log', '--format=%P', '-8', 'main')).split('\n')
    t.ok(parents.every((p) => /^[0-9a-f]{40}$/.test(p)), 'each commit has exactly one parent')
    const files = (await git(repo, 'ls-tree', '--name-only', 'main', 'projects/')).split('\n')
    t.same(files.sort(), Array.from({ length: 8 }, (_, i) => `projects/p-${i}.json`).sort())
  })
}

t.test('the route is in the OpenAPI document', async (t) => {
  const doc = (await app.inject({ url: '/openapi.json' })).json()
  const route = doc.paths['/git/{gitType}/repos/{repoPath}/branches/{branchName}/projects/{projectPath}']?.post
  t.ok(route, 'documented')
  t.same(route.parameters.map((p: { name: string, in: string }) => `${p.in}:${p.name}`).sort(),
    ['path:branchName', 'path:gitType', 'path:projectPath', 'path:repoPath'])
  t.match(route.parameters.find((p: { name: string }) => p.name === 'repoPath').description, /netops%2Fautomation/)
  t.same(Object.keys(route.responses).sort(), ['200', '400', '401', '403', '404', '409', '413', '414', '415', '429', '502', '503', '504'])
  t.ok(route.requestBody.content['application/json'].schema.properties.project)
  t.same(route.security, [{ basicAuth: [] }, { bearerAuth: [] }, { cookieAuth: [] }, { queryToken: [] }])
  t.match(route.description, /designer/)
})

t.test('GIT_PROVIDERS reaches the service: a configured provider replaces the default of the same name', async (t) => {
  const own = await buildTestApp(t, { database: 'any', env: { GIT_PROVIDERS: JSON.stringify({ github: { url: server.url, token: TOKEN, username: USER }, Internal: { url: 'https://git.example.com/' } }) } })
  t.same([...own.git.providers.values()].map((p) => p.name).sort(), ['GitLab', 'Internal', 'github'])
  t.equal(own.git.provider('GITHUB')?.url, server.url)
  t.equal(own.git.provider('internal')?.url, 'https://git.example.com')
  t.equal(own.git.provider('gitlab')?.url, 'https://gitlab.com')
})
