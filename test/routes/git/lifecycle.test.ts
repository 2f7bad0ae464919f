// A project's whole life on a real `git http-backend`: read, update, branches, users' own tokens,
// and what an attacker or a failing provider can send. Long because every step builds on the one
// before, on one server.
import t from 'tap'
import fc from 'fast-check'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { createServer } from 'node:http'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { gitCli, startGitServer } from '../../fixtures/git-server.js'
import { adminAuth, buildTestApp, captureLogs, createTestDatabase, createUser, testDatabases, type TestApp } from '../../helper.js'

// Every case talks to a real git http-backend (a process per request), on both databases: on a
// busy shared machine this file takes minutes, past the default limit of a test file.
t.setTimeout(600_000)
const BOT = 'netops-bot'
const BOT_TOKEN = 'glpat-Bot-Token-5c1d2e'
const ALICE_TOKEN = 'ghp_Alice-Own-Token-9a8b7c'
const WRONG_TOKEN = 'ghp_Not-Accepted-0f0f0f'
const SECRET_REPO = 'netops/secret'
// The provider knows two accounts: the service's own (bot) and alice's; only alice may see SECRET_REPO.
const server = await startGitServer({
  username: BOT,
  password: BOT_TOKEN,
  users: { alice: ALICE_TOKEN },
  access: (user, repoPath) => repoPath !== SECRET_REPO || user === 'alice'
})
t.teardown(async () => { await server.close() })

const e = encodeURIComponent
const projectUrl = (repo: string, branch: string, projectPath: string): string =>
  `/git/GitHub/repos/${e(repo)}/branches/${e(branch)}/projects/${e(projectPath)}`
const branchesUrl = (repo: string): string => `/git/GitHub/repos/${e(repo)}/branches`
/** The git CLI with `input` on its standard input (never a synchronous child: the server runs in this process). */
async function gitWithInput (args: string[], input: string | Buffer): Promise<string> {
  const child = spawn('git', args, { env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }, stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s })
  // A command that needs no input (commit-tree -m) may exit before reading it: the closed pipe is
  // no failure of its own, its exit code says whether it worked.
  child.stdin.on('error', () => {})
  child.stdin.end(input)
  const [code] = await once(child, 'close') as [number]
  if (code !== 0) throw new Error(`git ${args.join(' ')} failed (${code})`)
  return out.trim()
}
const git = async (repo: string, ...args: string[]): Promise<string> =>
  (await gitCli(['--git-dir', server.repoDir(repo), ...args])).trimEnd()
const tip = async (repo: string, ref = 'main'): Promise<string> => await git(repo, 'rev-parse', ref)
const subjects = async (repo: string, ref = 'main'): Promise<string[]> => (await git(repo, 'log', '--format=%s', ref)).split('\n')

const env = { GIT_PROVIDERS: JSON.stringify({ GitHub: { url: server.url, username: BOT, token: BOT_TOKEN } }), LOG_LEVEL: 'info' }
const logs = captureLogs()
const app = await buildTestApp(t, { env, logStream: logs })
const ann = await createUser(app, { username: 'ann', roles: ['designer'], email: 'ann@example.com' })
const alice = await createUser(app, { username: 'alice', roles: ['designer'], email: 'alice@example.com' })
const reader = await createUser(app, { username: 'reader' })

t.test('read after initialize, update then read, an unchanged update, If-Match', async (t) => {
  const repo = 'netops/lifecycle'
  await server.createRepo(repo, { files: { 'notes.txt': 'plain text\n' } })
  const url = projectUrl(repo, 'main', 'projects/site-a.json')
  const created = await app.inject({ method: 'POST', url, headers: { authorization: ann }, payload: { project: { name: 'site-a', n: 1 } } })
  t.equal(created.statusCode, 200, created.body)
  const blob1 = await git(repo, 'rev-parse', 'main:projects/site-a.json')
  t.equal(created.headers.etag, `"${blob1}"`, 'initialization answers the blob id as ETag')

  const read = await app.inject({ method: 'GET', url, headers: { authorization: reader } })
  t.equal(read.statusCode, 200, 'any user may read')
  t.equal(read.body, `${JSON.stringify({ name: 'site-a', n: 1 }, null, 2)}\n`, 'the exact bytes of the file')
  t.match(read.headers['content-type'], /^application\/json/)
  t.equal(read.headers.etag, `"${blob1}"`)
  t.equal(read.headers['x-git-commit'], await tip(repo), 'names the commit read')

  const text = await app.inject({ method: 'GET', url: projectUrl(repo, 'main', 'notes.txt'), headers: { authorization: reader } })
  t.equal(text.statusCode, 200)
  t.equal(text.body, 'plain text\n')
  t.match(text.headers['content-type'], /^text\/plain; charset=utf-8/, 'a file that is not JSON comes as text')

  const before = await tip(repo)
  const updated = await app.inject({ method: 'PUT', url, headers: { authorization: ann }, payload: { project: { name: 'site-a', n: 2 } } })
  t.equal(updated.statusCode, 200, updated.body)
  t.same(updated.json(), { message: 'Successfully updated project', data: { name: 'site-a', n: 2 } })
  t.equal(await git(repo, 'log', '-1', '--format=%an <%ae>|%s|%P', 'main'), `ann <ann@example.com>|Update project projects/site-a.json|${before}`)
  t.same((await git(repo, 'ls-tree', '-r', '--name-only', 'main')).split('\n'), ['README.md', 'notes.txt', 'projects/site-a.json'])
  const blob2 = await git(repo, 'rev-parse', 'main:projects/site-a.json')
  t.equal(updated.headers.etag, `"${blob2}"`)
  const reread = await app.inject({ method: 'GET', url, headers: { authorization: reader } })
  t.same(reread.json(), { name: 'site-a', n: 2 }, 'the update is read back')

  const mark = server.requests
  const tipBefore = await tip(repo)
  const same = await app.inject({ method: 'PUT', url, headers: { authorization: ann }, payload: { project: { name: 'site-a', n: 2 } } })
  t.equal(same.statusCode, 200)
  t.equal(same.json().message, 'Project unchanged: nothing committed', 'says so')
  t.equal(await tip(repo), tipBefore, 'no commit')
  t.notOk(server.requestLog.slice(mark).some((r) => r.method === 'POST' && r.path.endsWith('git-receive-pack')), 'nothing pushed')

  const stale = await app.inject({
    method: 'PUT', url, headers: { authorization: ann, 'if-match': `"${blob1}"` }, payload: { project: { name: 'site-a', n: 3 } }
  })
  t.equal(stale.statusCode, 409, 'If-Match naming an older blob')
  t.equal(stale.json().code, 'GIT_PROJECT_CHANGED')
  t.equal(await tip(repo), tipBefore, 'nothing pushed')
  const fresh = await app.inject({
    method: 'PUT', url, headers: { authorization: ann, 'if-match': `"${blob2}"` }, payload: { project: { name: 'site-a', n: 3 } }
  })
  t.equal(fresh.statusCode, 200, 'If-Match naming the current blob')
  const malformed = await app.inject({ method: 'PUT', url, headers: { authorization: ann, 'if-match': blob2 }, payload: { project: {} } })
  t.equal(malformed.statusCode, 400, 'an unquoted If-Match is malformed')
  t.match(malformed.json().message, /If-Match/)
})

t.test('a read asks the provider for the tip each time and fetches only when the cache is behind', async (t) => {
  const repo = 'netops/freshness'
  await server.createRepo(repo, { files: { 'a.json': '{"v":1}\n' } })
  const url = projectUrl(repo, 'main', 'a.json')
  const requests = (from: number): string[] => server.requestLog.slice(from).map((r) => `${r.method} ${/service=(git-[a-z-]+)/.exec(r.query)?.[1] ?? r.path.split('/').pop() ?? ''}`)
  let mark = server.requests
  const cold = await app.inject({ method: 'GET', url, headers: { authorization: reader } })
  t.equal(cold.statusCode, 200)
  // isomorphic-git's fetch asks for the advertisement again before it negotiates.
  t.same(requests(mark), ['GET git-upload-pack', 'GET git-upload-pack', 'POST git-upload-pack'], 'a cold cache: the advertisement, then a fetch')
  mark = server.requests
  const warm = await app.inject({ method: 'GET', url, headers: { authorization: reader } })
  t.same(warm.json(), { v: 1 })
  t.same(requests(mark), ['GET git-upload-pack'], 'a warm cache at the tip: the advertisement alone')
  // Another client adds a file that is not text.
  const gitdir = server.repoDir(repo)
  const binary = await gitWithInput(['--git-dir', gitdir, 'hash-object', '-w', '--stdin'], Buffer.from([0xff, 0xfe, 0x00, 0x80]))
  const tree = await gitWithInput(['--git-dir', gitdir, 'mktree'], `${await git(repo, 'ls-tree', 'main')}\n100644 blob ${binary}\tbin.dat\n`)
  const commit = await gitWithInput(['--git-dir', gitdir, '-c', 'user.name=X', '-c', 'user.email=x@example.com',
    'commit-tree', tree, '-p', 'main', '-m', 'elsewhere'], '')
  await git(repo, 'update-ref', 'refs/heads/main', commit)
  mark = server.requests
  const behind = await app.inject({ method: 'GET', url, headers: { authorization: reader } })
  t.equal(behind.headers['x-git-commit'], commit, 'the new tip')
  t.same(requests(mark), ['GET git-upload-pack', 'GET git-upload-pack', 'POST git-upload-pack'], 'behind: an incremental fetch')

  const bytes = await app.inject({ method: 'GET', url: projectUrl(repo, 'main', 'bin.dat'), headers: { authorization: reader } })
  t.equal(bytes.statusCode, 200)
  t.equal(bytes.headers['content-type'], 'application/octet-stream', 'bytes that are not UTF-8 come as they are')
  t.same([...bytes.rawPayload], [0xff, 0xfe, 0x00, 0x80])
})

t.test('an empty repository: no branches, nothing to create a branch from', async (t) => {
  const repo = 'netops/empty'
  await gitCli(['init', '-q', '--bare', '--initial-branch=main', server.repoDir(repo)])
  const listed = await app.inject({ method: 'GET', url: branchesUrl(repo), headers: { authorization: reader } })
  t.same(listed.json(), { branches: [], defaultBranch: null })
  const created = await app.inject({ method: 'POST', url: `${branchesUrl(repo)}/x`, headers: { authorization: ann } })
  t.equal(created.statusCode, 409)
  t.equal(created.json().code, 'GIT_REPOSITORY_EMPTY')
  const read = await app.inject({ method: 'GET', url: projectUrl(repo, 'main', 'a.json'), headers: { authorization: reader } })
  t.equal(read.statusCode, 404)
  t.equal(read.json().code, 'GIT_BRANCH_NOT_FOUND')
})

t.test('404 names what is missing; an update never creates', async (t) => {
  const repo = 'netops/missing'
  await server.createRepo(repo, { files: { 'dir/a.json': '{}\n' } })
  const cases: Array<[string, string, string, RegExp, string]> = [
    ['netops/no-such-repo', 'main', 'a.json', /Repository netops\/no-such-repo not found/, 'GIT_REPOSITORY_NOT_FOUND'],
    [repo, 'nope', 'a.json', /Branch nope not found/, 'GIT_BRANCH_NOT_FOUND'],
    [repo, 'main', 'b.json', /Project b\.json not found/, 'GIT_PROJECT_NOT_FOUND'],
    [repo, 'main', 'dir', /a directory/, 'GIT_PROJECT_NOT_FOUND'],
    [repo, 'main', 'dir/a.json/x', /not a directory/, 'GIT_PROJECT_NOT_FOUND']
  ]
  const before = await tip(repo)
  for (const [r, branch, file, message, code] of cases) {
    for (const method of ['GET', 'PUT'] as const) {
      const res = await app.inject({ method, url: projectUrl(r, branch, file), headers: { authorization: ann }, payload: method === 'PUT' ? { project: { x: 1 } } : undefined })
      t.equal(res.statusCode, 404, `${method} ${r} ${branch} ${file}`)
      t.match(res.json().message, message)
      t.equal(res.json().code, code)
    }
  }
  t.equal(await tip(repo), before, 'nothing pushed')
  const gitRoot = path.join(app.config.DATA_DIR, 'git', 'github')
  t.notOk((await readdir(gitRoot).catch(() => [])).some((d) => d.startsWith('netops%2Fno-such-repo')), 'an unknown repository leaves no cache behind')
})

t.test('an update racing another writer: theirs is kept and ours lands on top, or 409 with If-Match', async (t) => {
  const repo = 'netops/race'
  await server.createRepo(repo, { files: { 'p.json': '{"v":0}\n', 'q.json': '{"v":0}\n' } })
  const url = projectUrl(repo, 'main', 'p.json')
  const read = await app.inject({ method: 'GET', url, headers: { authorization: ann } })
  const etag = read.headers.etag as string
  // Another writer changes q.json, then p.json, behind the cache's back.
  const other = async (file: string, content: string): Promise<void> => {
    let work = await mkdtemp(path.join(os.tmpdir(), 'other-writer-'))
    const auth = `http.extraHeader=Authorization: Basic ${Buffer.from(`${BOT}:${BOT_TOKEN}`).toString('base64')}`
    await gitCli(['-c', auth, 'clone', '-q', server.repoUrl(repo), path.join(work, 'c')])
    work = path.join(work, 'c')
    await gitCli(['-C', work, 'config', 'user.name', 'Other'])
    await gitCli(['-C', work, 'config', 'user.email', 'other@example.com'])
    await writeFile(path.join(work, file), content)
    await gitCli(['-C', work, 'commit', '-q', '-am', `Other writer changes ${file}`])
    await gitCli(['-C', work, '-c', auth, 'push', '-q', 'origin', 'HEAD:main'])
    await rm(path.dirname(work), { recursive: true, force: true })
  }
  await other('q.json', '{"v":"other"}\n')
  const landed = await app.inject({ method: 'PUT', url, headers: { authorization: ann, 'if-match': etag }, payload: { project: { v: 'ours' } } })
  t.equal(landed.statusCode, 200, 'another file changed: If-Match still holds')
  t.same(await subjects(repo), ['Update project p.json', 'Other writer changes q.json', 'Initial commit'], 'theirs kept, ours on top')
  t.equal(await git(repo, 'show', 'main:q.json'), '{"v":"other"}')

  const etag2 = landed.headers.etag as string
  await other('p.json', '{"v":"theirs"}\n')
  const refused = await app.inject({ method: 'PUT', url, headers: { authorization: ann, 'if-match': etag2 }, payload: { project: { v: 'mine' } } })
  t.equal(refused.statusCode, 409, 'the file itself changed since it was read')
  t.equal(await git(repo, 'show', 'main:p.json'), '{"v":"theirs"}', 'theirs stays')
  const unconditional = await app.inject({ method: 'PUT', url, headers: { authorization: ann }, payload: { project: { v: 'mine' } } })
  t.equal(unconditional.statusCode, 200, 'without If-Match the last writer wins, in a new commit')
  t.equal(await git(repo, 'rev-list', '--count', 'main'), '5')
})

t.test('branches: listed from the provider, created at the origin, 409 when they exist', async (t) => {
  const repo = 'netops/branches'
  await server.createRepo(repo, { branch: 'trunk' })
  const listed = await app.inject({ method: 'GET', url: branchesUrl(repo), headers: { authorization: reader } })
  t.equal(listed.statusCode, 200)
  t.same(listed.json(), { branches: ['trunk'], defaultBranch: 'trunk' })

  const created = await app.inject({ method: 'POST', url: `${branchesUrl(repo)}/${e('feature/site-a')}`, headers: { authorization: ann } })
  t.equal(created.statusCode, 200, created.body)
  t.same(created.json(), { message: 'Successfully created branch: feature/site-a' })
  t.equal(await tip(repo, 'feature/site-a'), await tip(repo, 'trunk'), 'at the default branch\'s tip')

  const init = await app.inject({ method: 'POST', url: projectUrl(repo, 'feature/site-a', 'x.json'), headers: { authorization: ann }, payload: { project: { x: 1 } } })
  t.equal(init.statusCode, 200)
  const fromFeature = await app.inject({
    method: 'POST', url: branchesUrl(repo), headers: { authorization: ann }, payload: { newBranch: 'release/1', originBranch: 'feature/site-a' }
  })
  t.equal(fromFeature.statusCode, 200, 'the platform\'s form: the name in the body')
  t.equal(await tip(repo, 'release/1'), await tip(repo, 'feature/site-a'))

  const again = await app.inject({ method: 'POST', url: `${branchesUrl(repo)}/${e('feature/site-a')}`, headers: { authorization: ann } })
  t.equal(again.statusCode, 409)
  t.equal(again.json().code, 'GIT_BRANCH_EXISTS')
  const noOrigin = await app.inject({ method: 'POST', url: `${branchesUrl(repo)}/x`, headers: { authorization: ann }, payload: { originBranch: 'nope' } })
  t.equal(noOrigin.statusCode, 404)
  t.match(noOrigin.json().message, /Branch nope not found/)
  const forbidden = await app.inject({ method: 'POST', url: `${branchesUrl(repo)}/y`, headers: { authorization: reader } })
  t.equal(forbidden.statusCode, 403, 'writes need a writer role')

  const relisted = await app.inject({ method: 'GET', url: branchesUrl(repo), headers: { authorization: reader } })
  t.same(relisted.json().branches, ['feature/site-a', 'release/1', 'trunk'])
  const repoCreate = await app.inject({ method: 'POST', url: '/git/GitHub/repos', headers: { authorization: ann }, payload: { name: 'x' } })
  t.equal(repoCreate.statusCode, 501, 'creating a repository needs a provider REST API')
  t.match(repoCreate.json().message, /REST API of Git provider GitHub/)
})

t.test("users' own tokens: used for their calls, checked by the provider, never shown", async (t) => {
  const repo = 'netops/identities'
  await server.createRepo(repo)
  const credentialsUrl = (user: string): string => `/users/${user}/git-credentials/github`

  const bySomeoneElse = await app.inject({ method: 'PUT', url: credentialsUrl('alice'), headers: { authorization: ann }, payload: { token: 'x' } })
  t.equal(bySomeoneElse.statusCode, 403, 'only the user or an admin')
  const stored = await app.inject({ method: 'PUT', url: credentialsUrl('alice'), headers: { authorization: alice }, payload: { token: ALICE_TOKEN, username: 'alice' } })
  t.equal(stored.statusCode, 200, stored.body)
  t.same(stored.json(), { username: 'alice', gitType: 'GitHub', stored: true })
  const unknownUser = await app.inject({ method: 'PUT', url: credentialsUrl('nobody'), headers: { authorization: adminAuth }, payload: { token: 'x' } })
  t.equal(unknownUser.statusCode, 404)
  const badBody = await app.inject({ method: 'PUT', url: credentialsUrl('alice'), headers: { authorization: alice }, payload: { token: 'a\nb' } })
  t.equal(badBody.statusCode, 400, 'a token with a line break')
  t.match(badBody.json().message, /token/)

  const mark = server.requests
  const aliceInit = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'alice.json'), headers: { authorization: alice }, payload: { project: { by: 'alice' } } })
  t.equal(aliceInit.statusCode, 200, aliceInit.body)
  const annInit = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'ann.json'), headers: { authorization: ann }, payload: { project: { by: 'ann' } } })
  t.equal(annInit.statusCode, 200)
  const pushes = server.requestLog.slice(mark).filter((r) => r.method === 'POST' && r.path.endsWith('git-receive-pack')).map((r) => r.user)
  t.same(pushes, ['alice', BOT], "alice's push carries her token; ann, who has none, pushes with the provider's")
  t.same((await git(repo, 'log', '--format=%an', 'main')).split('\n'), ['ann', 'alice', 'Fixture'], 'each commit authored by its caller')

  // Only alice can see the secret repository on the provider; once her reads warmed the cache,
  // others still get the provider's answer for them, not the cache's content.
  await server.createRepo(SECRET_REPO, { files: { 's.json': '{"secret":true}\n' } })
  const secretUrl = projectUrl(SECRET_REPO, 'main', 's.json')
  const aliceRead = await app.inject({ method: 'GET', url: secretUrl, headers: { authorization: alice } })
  t.equal(aliceRead.statusCode, 200)
  t.same(aliceRead.json(), { secret: true })
  for (const [who, auth] of [['ann', ann], ['reader', reader]] as const) {
    const res = await app.inject({ method: 'GET', url: secretUrl, headers: { authorization: auth } })
    t.equal(res.statusCode, 404, `${who} cannot read through the cache what the provider hides from them`)
    t.notMatch(res.body, /"secret"/, 'no content')
    const write = await app.inject({ method: 'PUT', url: secretUrl, headers: { authorization: auth }, payload: { project: { secret: false } } })
    t.ok(write.statusCode === 404 || write.statusCode === 403, `${who} cannot write it either (${write.statusCode})`)
  }
  t.equal(await git(SECRET_REPO, 'show', 'main:s.json'), '{"secret":true}')

  // A token the provider refuses: a 502 naming whose token, nothing pushed.
  const annStores = await app.inject({ method: 'PUT', url: '/users/ann/git-credentials/GitHub', headers: { authorization: ann }, payload: { token: WRONG_TOKEN } })
  t.equal(annStores.statusCode, 200)
  const before = await tip(repo)
  const refused = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'ann2.json'), headers: { authorization: ann } })
  t.equal(refused.statusCode, 502)
  t.equal(refused.json().code, 'GIT_PROVIDER_AUTH')
  t.match(refused.json().message, /refused the Git token stored for user ann/)
  t.equal(await tip(repo), before)
  const removed = await app.inject({ method: 'DELETE', url: '/users/ann/git-credentials/GitHub', headers: { authorization: adminAuth } })
  t.same(removed.json(), { deleted: true }, 'an admin may remove it')
  const removedAgain = await app.inject({ method: 'DELETE', url: '/users/ann/git-credentials/GitHub', headers: { authorization: ann } })
  t.equal(removedAgain.statusCode, 404)
  const afterRemoval = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'ann2.json'), headers: { authorization: ann } })
  t.equal(afterRemoval.statusCode, 200, "back to the provider's token")

  const everything = logs.lines.join('\n')
  for (const secret of [ALICE_TOKEN, WRONG_TOKEN, Buffer.from(`alice:${ALICE_TOKEN}`).toString('base64')]) {
    t.notOk(everything.includes(secret), 'no token in the log')
  }
  const { rows } = await app.db.query<{ token_sealed: string }>('SELECT token_sealed FROM git_credentials')
  t.ok(rows.length > 0 && rows.every((r) => !r.token_sealed.includes(ALICE_TOKEN)), 'encrypted at rest')
})

t.test('hostile path and branch names: 400, nothing pushed, the branch still usable', async (t) => {
  const repo = 'netops/hostile'
  await server.createRepo(repo)
  const before = await tip(repo)
  const ignorable = fc.constantFrom('\u200c', '\u200d', '\u200e', '\u200f', '\u202a', '\u202e', '\u206a', '\u206f', '\ufeff', '\u2066')
  const dotGit = fc.constantFrom('.git', '.GIT', '.Git', '.gIt')
  const alias = fc.oneof(
    fc.constantFrom('GIT~1', 'git~1', '.git~1', 'Git~2', 'GI7EBA~1', 'gitmod~1'),
    dotGit.map((d) => `${d}::$INDEX_ALLOCATION`),
    dotGit.map((d) => `${d}:$DATA`),
    fc.tuple(dotGit, ignorable, fc.nat(4)).map(([d, c, at]) => d.slice(0, at) + c + d.slice(at)),
    fc.tuple(dotGit, fc.stringMatching(/^[. ]{1,3}$/)).map(([d, tail]) => d + tail),
    fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), ignorable).map(([name, c]) => `${name}${c}.json`)
  )
  const hostilePath = fc.oneof(
    fc.tuple(fc.array(fc.stringMatching(/^[a-z]{1,5}$/), { maxLength: 2 }), alias, fc.constantFrom('', '/hooks/post-checkout', '/x'))
      .map(([dirs, a, rest]) => [...dirs, a].join('/') + (a.endsWith('.json') ? '' : rest)),
    // At the root, where they configure the repository.
    fc.constantFrom('.gitmodules', '.GITMODULES', '.github/workflows/x.yml', '.GitHub/x', '.gitlab-ci.yml')
  )
  const hostileBranch = fc.oneof(
    fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), ignorable, fc.stringMatching(/^[a-z]{0,6}$/)).map(([a, c, b]) => a + c + b),
    fc.stringMatching(/^[a-z]{1,8}$/).map((b) => `refs/heads/${b}`),
    fc.constant('HEAD')
  )
  const mark = server.requests
  await fc.assert(fc.asyncProperty(hostilePath, fc.constantFrom('POST', 'PUT'), async (p, method) => {
    const res = await app.inject({ method, url: projectUrl(repo, 'main', p), headers: { authorization: ann }, payload: { project: { x: 1 } } })
    return res.statusCode === 400 && /^projectPath /.test(res.json().message as string)
  }), { numRuns: 120 })
  await fc.assert(fc.asyncProperty(hostileBranch, async (b) => {
    const init = await app.inject({ method: 'POST', url: projectUrl(repo, b, 'x.json'), headers: { authorization: ann } })
    const create = await app.inject({ method: 'POST', url: `${branchesUrl(repo)}/${e(b)}`, headers: { authorization: ann } })
    return init.statusCode === 400 && create.statusCode === 400 && /^branchName /.test(create.json().message as string)
  }), { numRuns: 60 })
  t.equal(server.requests, mark, 'nothing reached the provider')
  t.equal(await tip(repo), before, 'nothing pushed')
  const usable = await app.inject({ method: 'POST', url: projectUrl(repo, 'main', 'ok.json'), headers: { authorization: ann } })
  t.equal(usable.statusCode, 200, 'the branch is still usable')
  t.equal(await git(repo, 'fsck', '--strict', '--no-progress'), '')
})

t.test('a tree from the provider that isomorphic-git refuses is a 502, not a 500', async (t) => {
  const repo = 'netops/poisoned'
  await server.createRepo(repo, { files: { 'site.json': '{}\n' } })
  // Written with git's plumbing, which does not check names as a checkout does: what an attacker
  // with push access elsewhere could leave on the branch.
  const gitdir = server.repoDir(repo)
  const blob = await git(repo, 'rev-parse', 'main:site.json')
  const tree = await gitWithInput(['--git-dir', gitdir, 'mktree'], `100644 blob ${blob}\tGIT~1\n100644 blob ${blob}\tsite.json\n`)
  const commit = await gitWithInput(['--git-dir', gitdir, '-c', 'user.name=X', '-c', 'user.email=x@example.com', 'commit-tree', tree, '-p', 'main', '-m', 'poison'], '')
  await git(repo, 'update-ref', 'refs/heads/main', commit)
  for (const method of ['GET', 'PUT', 'POST'] as const) {
    const file = method === 'POST' ? 'new.json' : 'site.json'
    const res = await app.inject({ method, url: projectUrl(repo, 'main', file), headers: { authorization: ann }, payload: method === 'GET' ? undefined : { project: { a: 1 } } })
    t.equal(res.statusCode, 502, `${method}: ${res.body}`)
    t.equal(res.json().code, 'GIT_PROVIDER_TREE_REFUSED')
    t.match(res.json().message, /GIT~1/)
  }
  t.equal(await tip(repo), commit, 'nothing pushed on top')
})

for (const database of testDatabases.filter((d) => d === 'postgres')) {
  t.test('concurrent updates through two instances on one PostgreSQL all land, in a linear history', async (t) => {
    const repo = 'netops/two-instances'
    const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`p${i}.json`, '{}\n']))
    await server.createRepo(repo, { files })
    const db = await createTestDatabase(t, database)
    const one = await buildTestApp(t, { database: db, env })
    // Each instance has its own DATA_DIR, as docs/deploying.md asks: the clone cache is per instance.
    const otherDataDir = await mkdtemp(path.join(os.tmpdir(), 'second-instance-'))
    t.teardown(async () => { await rm(otherDataDir, { recursive: true, force: true }) })
    const two = await buildTestApp(t, { database: db, env: { ...env, DATA_DIR: otherDataDir } })
    const apps: TestApp[] = [one, two]
    const before = await tip(repo)
    const results = await Promise.all(Object.keys(files).map(async (file, i) => await (apps[i % 2] as TestApp).inject({
      method: 'PUT', url: projectUrl(repo, 'main', file), headers: { authorization: adminAuth }, payload: { project: { i } }
    })))
    t.same(results.map((r) => r.statusCode), [200, 200, 200, 200, 200, 200], results.map((r) => r.body).join('\n'))
    const parents = (await git(repo, 'rev-list', '--parents', `${before}..main`)).split('\n')
    t.equal(parents.length, 6, 'six commits')
    t.ok(parents.every((line) => line.split(' ').length === 2), 'each with one parent: linear')
    for (const [i, file] of Object.keys(files).entries()) t.equal(await git(repo, 'show', `main:${file}`), `{\n  "i": ${i}\n}`)
  })
}

t.test('an oversized provider answer is a 502, read no further than the limit', async (t) => {
  let sent = 0
  let closed = false
  const huge = createServer((req, res) => {
    if (req.url?.includes('declared') === true) {
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement', 'content-length': String(300 * 1024 * 1024) })
      res.write('001e# service=git-upload-pack\n')
      return
    }
    res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' })
    const chunk = Buffer.alloc(64 * 1024, '0032' + 'a'.repeat(46))
    const pump = (): void => {
      while (!closed && sent < 300 * 1024 * 1024) {
        sent += chunk.length
        if (!res.write(chunk)) { res.once('drain', pump); return }
      }
      res.end()
    }
    res.on('close', () => { closed = true })
    pump()
  })
  huge.listen(0, '127.0.0.1')
  await once(huge, 'listening')
  t.teardown(() => { huge.closeAllConnections(); huge.close() })
  const url = `http://127.0.0.1:${(huge.address() as AddressInfo).port}`
  const small = await buildTestApp(t, { database: 'any', env: { GIT_PROVIDERS: JSON.stringify({ GitHub: { url } }), GIT_MAX_RESPONSE_BYTES: String(1024 * 1024) } })
  const heapBefore = process.memoryUsage().heapUsed
  for (const repo of ['big/streamed', 'big/declared']) {
    const res = await small.inject({ method: 'GET', url: branchesUrl(repo), headers: { authorization: adminAuth } })
    t.equal(res.statusCode, 502, repo)
    t.equal(res.json().code, 'GIT_PROVIDER_RESPONSE_TOO_LARGE')
    t.match(res.json().message, /larger than 1048576 bytes/)
  }
  t.ok(sent < 64 * 1024 * 1024, `the provider got to send ${sent} bytes of 300 MiB before the connection closed`)
  t.ok(process.memoryUsage().heapUsed - heapBefore < 64 * 1024 * 1024, 'the heap did not take the answer in')
})

t.test('everything is in the OpenAPI document', async (t) => {
  const doc = (await app.inject({ url: '/openapi.json' })).json()
  const paths = doc.paths as Record<string, Record<string, unknown>>
  const project = '/git/{gitType}/repos/{repoPath}/branches/{branchName}/projects/{projectPath}'
  t.same(Object.keys(paths[project] ?? {}).sort(), ['get', 'post', 'put'])
  t.ok(paths['/git/{gitType}/repos/{repoPath}/branches']?.get, 'list branches')
  t.ok(paths['/git/{gitType}/repos/{repoPath}/branches']?.post, 'create branch (platform form)')
  t.ok(paths['/git/{gitType}/repos/{repoPath}/branches/{branchName}']?.post, 'create branch')
  t.ok(paths['/git/{gitType}/repos']?.post, 'create repository (501)')
  t.same(Object.keys(paths['/users/{username}/git-credentials/{gitType}'] ?? {}).sort(), ['delete', 'put'])
})
