// A client generated from the served document, in the two commands the README gives
// (openapi-typescript, then openapi-fetch over its types), with a program using it
// (test/client/tour.ts): type-checked, then run against the service and the NSO stand-in.
import t from 'tap'
import { execFile } from 'node:child_process'
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { ADMIN, buildTestApp } from '../helper.js'
import { nsoAdapter, startNso } from '../helpers/nso.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const CLIENT = path.join(ROOT, 'test/client')
const bin = (name: string): string => path.join(ROOT, 'node_modules/.bin', name)

interface Tour {
  tour: (input: { baseUrl: string, username: string, password: string, orchestrator: Record<string, unknown> }) => Promise<{
    version: number, names: string[], staleStatus: number, staleMessage?: string, actions: string[], relayResults: string[]
  }>
}

t.test('a generated client type-checks a program written against it, and the program runs', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  const nso = await startNso(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })

  // Inside the project, so that the program resolves openapi-fetch from its node_modules.
  const dir = await mkdtemp(path.join(CLIENT, '.run-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await run(bin('openapi-typescript'), [`${address}/openapi.json`, '--output', path.join(dir, 'api.d.ts')], { cwd: dir })
  await copyFile(path.join(CLIENT, 'tour.ts'), path.join(dir, 'tour.ts'))
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({
    extends: path.join(ROOT, 'tsconfig.json'),
    compilerOptions: { noEmit: true, rootDir: ROOT, noUnusedLocals: true },
    include: ['*.ts'],
    exclude: []
  }))
  const checked = await run(bin('tsc'), ['-p', path.join(dir, 'tsconfig.json')], { cwd: dir }).then(() => '', (err: { stdout?: string }) => err.stdout ?? String(err))
  t.equal(checked, '', 'the program type-checks against the generated client')

  const { tour } = await import(path.join(dir, 'tour.ts')) as Tour
  const result = await tour({
    baseUrl: address,
    username: ADMIN.username,
    password: ADMIN.password,
    orchestrator: nsoAdapter('tour-nso', nso)
  })
  t.equal(result.version, 2, 'replaced with If-Match')
  t.same(result.names, ['tour'], 'listed with equals[name]')
  t.equal(result.staleStatus, 409, 'the same If-Match again is stale')
  t.match(result.staleMessage, /version/i)
  t.same(result.actions, ['replace', 'create'], 'the history, newest first')
  t.same(result.relayResults, ['200'], 'the relay answered the orchestrator\'s status')
})
