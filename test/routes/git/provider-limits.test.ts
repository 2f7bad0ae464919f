// What a provider's answers may cost the service: calls to providers bounded in number (in the
// instance and per user) and a fetched pack streamed to disk, so that memory grows with that
// budget and not with the number of requests.
import t from 'tap'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { startGitServer } from '../../fixtures/git-server.js'
import { buildTestApp, createUser } from '../../helper.js'
import { until } from '../../helpers/until.js'

const MiB = 1024 * 1024

function projectUrl (repo: string, branch: string, projectPath: string): string {
  const e = encodeURIComponent
  return `/git/GitHub/repos/${e(repo)}/branches/${e(branch)}/projects/${e(projectPath)}`
}

/** Files left anywhere under `dir`. */
async function filesUnder (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name))
}

t.test('concurrent reads of a provider that streams without end: all but the budget refused, memory bounded by the budget', async (t) => {
  let open = (): void => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  const server = await startGitServer({ endlessUploadPack: { gate } })
  t.teardown(async () => { open(); await server.close() })
  const N = 12
  const repos = Array.from({ length: 4 }, (_, i) => `netops/endless-${i}`)
  for (const repo of repos) await server.createRepo(repo)

  const maxResponse = 64 * MiB
  const app = await buildTestApp(t, {
    env: {
      GIT_PROVIDERS: JSON.stringify({ GitHub: { url: server.url } }),
      GIT_MAX_RESPONSE_BYTES: String(maxResponse),
      GIT_PROVIDER_CONCURRENCY: '3',
      GIT_PROVIDER_CONCURRENCY_PER_USER: '2'
    }
  })
  // Users without any role may read projects.
  const alice = await createUser(app, { username: 'alice' })
  const bob = await createUser(app, { username: 'bob' })
  const fetchesWaiting = (): number => server.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/git-upload-pack')).length
  let settled = 0
  const read = (auth: string, repo: string) => app.inject({ method: 'GET', url: projectUrl(repo, 'main', 'README.md'), headers: { authorization: auth } })
    .finally(() => { settled++ })

  // Alice's third read is past her own bound; Bob gets the one slot left, then the instance is full.
  const responses = [read(alice, repos[0] as string), read(alice, repos[1] as string), read(alice, repos[2] as string)]
  await until(() => fetchesWaiting() === 2 && settled === 1)
  for (let i = 3; i < N; i++) responses.push(read(bob, repos[3] as string))
  await until(() => fetchesWaiting() === 3 && settled === N - 3)

  // The admitted fetches now stream without end, each until GIT_MAX_RESPONSE_BYTES.
  // Garbage not yet collected counts too: V8 lets some tens of MiB of buffers wait for a collection.
  const usage = (): number => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers }
  const before = usage()
  let peak = before
  const sampler = setInterval(() => { peak = Math.max(peak, usage()) }, 5)
  open()
  const answers = await Promise.all(responses)
  clearInterval(sampler)
  peak = Math.max(peak, usage())

  const busy = answers.filter((r) => r.statusCode === 503)
  const tooLarge = answers.filter((r) => r.statusCode === 502)
  t.equal(busy.length, N - 3, 'all but the budgeted ones refused')
  t.equal(tooLarge.length, 3, 'the budgeted ones read the answer up to GIT_MAX_RESPONSE_BYTES')
  for (const r of busy) {
    t.equal(r.json().code, 'GIT_PROVIDER_BUSY')
    t.equal(r.headers['retry-after'], '5')
  }
  const messages = busy.map((r) => r.json().message as string)
  t.equal(messages.filter((m) => m.startsWith('Too many calls to Git providers are running for this user (GIT_PROVIDER_CONCURRENCY_PER_USER)')).length, 1)
  t.equal(messages.filter((m) => m.startsWith('Too many calls to Git providers are running in this instance (GIT_PROVIDER_CONCURRENCY)')).length, N - 4)
  for (const r of tooLarge) t.equal(r.json().code, 'GIT_PROVIDER_RESPONSE_TOO_LARGE')
  const growth = peak - before
  t.ok(growth < 2 * maxResponse, `memory grew by ${Math.round(growth / MiB)} MiB while 3 answers of ${maxResponse / MiB} MiB were read ` +
    `(${N} x ${maxResponse / MiB} MiB = ${N * maxResponse / MiB} MiB if each were held whole)`)
  t.same((await filesUnder(path.join(app.config.DATA_DIR, 'git'))).filter((f) => f.includes('incoming-')), [], 'no partial pack left on disk')

  // The slots are given back: the next read is admitted (and meets the same endless answer).
  const again = await read(alice, repos[0] as string)
  t.equal(again.statusCode, 502)
})
