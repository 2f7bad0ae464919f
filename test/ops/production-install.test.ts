// What the container image does, without Docker: build, then install the production dependencies
// only next to dist/, and run the service from there. Proves the runtime needs no dev dependency.
import t from 'tap'
import { execFile } from 'node:child_process'
import { cp, mkdtemp, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { ADMIN, adminAuth, createTestDatabase, testDatabases } from '../helper.js'
import { cleanEnv, imageBuild, startBuiltServer } from './built-server.js'

// The build it makes (or waits for) compiles the service and the studio page: the OpenAPI
// document on a fresh embedded database, its types, Vite. Minutes on a busy machine.
t.setTimeout(600_000)

const run = promisify(execFile)
const exists = async (file: string): Promise<boolean> => await stat(file).then(() => true, () => false)

t.test('the production install runs the service', async (t) => {
  const build = await imageBuild()
  // Outside the project, so nothing resolves to the project's node_modules.
  const app = await mkdtemp(path.join(os.tmpdir(), 'netauto-image-'))
  t.teardown(async () => { await rm(app, { recursive: true, force: true }) })
  await cp(path.join(build, 'package.json'), path.join(app, 'package.json'))
  await cp(path.join(build, 'package-lock.json'), path.join(app, 'package-lock.json'))
  await cp(path.join(build, 'dist'), path.join(app, 'dist'), { recursive: true })

  // --prefer-offline: the cache that .ci/run's full install fills makes this quick.
  await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: app, env: cleanEnv() })
  for (const dev of ['typescript', 'tap', 'autocannon', '@types/node']) {
    t.notOk(await exists(path.join(app, 'node_modules', dev)), `${dev} (a dev dependency) is not installed`)
  }
  t.ok(await exists(path.join(app, 'node_modules', 'fastify')), 'production dependencies are')
  t.ok(await exists(path.join(app, 'dist', 'migrations', '001-users.sql')), 'migrations ship in dist/')
  t.notOk(await exists(path.join(app, 'dist', 'bench')), 'benchmarks do not (not in the build context)')
  t.notOk(await exists(path.join(app, 'dist', 'test')), 'nor test fixtures')

  for (const kind of testDatabases) {
    t.test(`on the ${kind} database`, async (t) => {
      const database = await createTestDatabase(t, kind)
      const server = await startBuiltServer(path.join(app, 'dist'), app, { ...database.env, ADMIN_PASSWORD: ADMIN.password })
      t.teardown(server.kill)

      const health = await fetch(`${server.url}/health`)
      t.equal(health.status, 200)
      const ready = await fetch(`${server.url}/ready`)
      t.equal(ready.status, 200, 'ready: the database answers')
      t.same(await ready.json(), { status: 'ready' })

      const users = await fetch(`${server.url}/users`, { headers: { authorization: adminAuth } })
      t.equal(users.status, 200)
      t.match(await users.json(), { total: 1, items: [{ username: ADMIN.username, roles: ['admin'] }] }, 'the bootstrap admin')
      const page = await fetch(`${server.url}/studio/`)
      t.equal(page.status, 200, 'the studio page, built into dist/web')
      t.match(await page.text(), /<script type="module" crossorigin src="\.\/assets\/index-[^"]+\.js">/)

      server.child.kill('SIGTERM')
      const exit = await server.exited
      t.same(exit, { code: 0, signal: null }, 'exits 0 on SIGTERM')
      if (exit.code !== 0) t.comment(server.output())
      t.ok(server.lines.some((l) => l.msg === 'closing' && l.signal === 'SIGTERM'), 'said why it closed')
    })
  }
})
