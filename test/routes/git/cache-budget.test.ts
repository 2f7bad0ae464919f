// The clone cache on disk: one per repository as the provider names it (every spelling a
// case-insensitive provider accepts shares it, and its first fetch), bounded in size and number.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { startGitServer } from '../../fixtures/git-server.js'
import { adminAuth, buildTestApp, type TestApp } from '../../helper.js'

const server = await startGitServer({ caseInsensitive: true })
t.teardown(async () => { await server.close() })

function readUrl (repo: string, projectPath = 'README.md', gitType = 'GitHub'): string {
  const e = encodeURIComponent
  return `/git/${gitType}/repos/${e(repo)}/branches/main/projects/${e(projectPath)}`
}
const read = async (app: TestApp, repo: string, gitType = 'GitHub') => await app.inject({ url: readUrl(repo, 'README.md', gitType), headers: { authorization: adminAuth } })
const caches = async (app: TestApp, provider = 'github'): Promise<string[]> =>
  (await readdir(path.join(app.config.DATA_DIR, 'git', provider)).catch(() => [])).sort()
const fetches = (from: number): number => server.requestLog.slice(from).filter((r) => r.method === 'POST' && r.path.endsWith('/git-upload-pack')).length

/** Every spelling of `name` by the case of its letters. */
function spellings (name: string): string[] {
  let out = ['']
  for (const c of name) out = out.flatMap((s) => c.toLowerCase() === c.toUpperCase() ? [s + c] : [s + c.toLowerCase(), s + c.toUpperCase()])
  return out
}

t.test('every spelling of a repository on a case-insensitive provider: one cache, one fetch', async (t) => {
  await server.createRepo('NetOps/Spelled')
  const app = await buildTestApp(t, {
    env: { GIT_PROVIDERS: JSON.stringify({ GitHub: { url: server.url }, Plain: { url: server.url, caseSensitive: true } }) }
  })
  const repos = [...new Set(spellings('netops/spe').map((s) => `${s}lled`))].slice(0, 8)
  t.equal(repos.length, 8)
  const mark = server.requestLog.length
  const answers = await Promise.all(repos.map(async (repo) => await read(app, repo)))
  t.same(answers.map((r) => r.statusCode), Array(8).fill(200), answers.map((r) => r.body).join('\n'))
  t.equal(fetches(mark), 1, 'the first fetch is made once, for every spelling')
  t.same(await caches(app), ['netops%2Fspelled.git'], 'one cache, named in lower case')

  // A provider configured as case-sensitive keeps spellings apart.
  t.equal((await read(app, 'NetOps/Spelled', 'Plain')).statusCode, 200)
  t.equal((await read(app, 'netops/spelled', 'Plain')).statusCode, 200)
  t.same(await caches(app, 'plain'), ['NetOps%2FSpelled.git', 'netops%2Fspelled.git'])
})

t.test('the cache holds at most GIT_CACHE_MAX_REPOSITORIES, the least recently used evicted first', async (t) => {
  for (const name of ['a', 'b', 'c']) await server.createRepo(`count/${name}`)
  const app = await buildTestApp(t, {
    // Which caches are kept is decided on the disk, whatever the database.
    database: 'any',
    env: { GIT_PROVIDERS: JSON.stringify({ GitHub: { url: server.url } }), GIT_CACHE_MAX_REPOSITORIES: '2' }
  })
  for (const name of ['a', 'b']) t.equal((await read(app, `count/${name}`)).statusCode, 200)
  t.same(await caches(app), ['count%2Fa.git', 'count%2Fb.git'])
  t.equal((await read(app, 'count/a')).statusCode, 200, 'a used again: b is now the least recently used')
  t.equal((await read(app, 'count/c')).statusCode, 200)
  t.same(await caches(app), ['count%2Fa.git', 'count%2Fc.git'], 'b evicted')
  const mark = server.requestLog.length
  t.equal((await read(app, 'count/b')).statusCode, 200, 'an evicted repository is fetched again when read')
  t.equal(fetches(mark), 1)
  t.same(await caches(app), ['count%2Fb.git', 'count%2Fc.git'])
})

t.test('the cache holds at most GIT_CACHE_MAX_BYTES', async (t) => {
  // Files that hardly compress: each cache takes about 700 KiB of a 1 MiB budget.
  await server.createRepo('size/one', { files: { 'blob.txt': randomBytes(700 * 1024).toString('base64') } })
  await server.createRepo('size/two', { files: { 'blob.txt': randomBytes(700 * 1024).toString('base64') } })
  const app = await buildTestApp(t, {
    // Which caches are kept is decided on the disk, whatever the database.
    database: 'any',
    env: { GIT_PROVIDERS: JSON.stringify({ GitHub: { url: server.url } }), GIT_CACHE_MAX_BYTES: String(1024 * 1024) }
  })
  t.equal((await read(app, 'size/one')).statusCode, 200)
  t.same(await caches(app), ['size%2Fone.git'])
  t.equal((await read(app, 'size/two')).statusCode, 200)
  t.same(await caches(app), ['size%2Ftwo.git'], 'the older cache evicted to stay within the budget')
})
