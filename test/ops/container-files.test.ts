// The Dockerfile, .dockerignore and compose.yaml, checked without a Docker engine: the image's
// steps themselves run in production-install.test.ts; here, what the files declare, and the
// HEALTHCHECK command run for real.
import t from 'tap'
import { execFile } from 'node:child_process'
import { access, readFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import packageJson from '../../package.json' with { type: 'json' }
import { buildTestApp } from '../helper.js'
import { ROOT, cleanEnv, dockerignoreMatcher } from './built-server.js'

const run = promisify(execFile)
const read = async (file: string): Promise<string> => await readFile(path.join(ROOT, file), 'utf8')

interface Instruction { keyword: string, args: string }

/** Dockerfile instructions with continuation lines joined and comments dropped. */
function instructions (text: string): Instruction[] {
  const logical = text.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n').replace(/\\\n/g, ' ')
  return logical.split('\n').map((l) => l.trim()).filter((l) => l !== '').map((l) => {
    const [keyword = '', ...rest] = l.split(/\s+/)
    return { keyword: keyword.toUpperCase(), args: rest.join(' ') }
  })
}

/** The exec-form (JSON array) arguments of an instruction, or undefined for the shell form. */
function execForm (args: string): string[] | undefined {
  try {
    const value: unknown = JSON.parse(args)
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined
  } catch {
    return undefined
  }
}

t.test('Dockerfile', async (t) => {
  const all = instructions(await read('Dockerfile'))
  const froms = all.map((ins, i) => ({ ins, i })).filter(({ ins }) => ins.keyword === 'FROM')
  t.equal(froms.length, 2, 'two stages')
  const [build, runtime] = froms
  t.match(build?.ins.args, /^node:\S+ AS build$/i, 'a build stage')
  const image = (build?.ins.args ?? '').split(/\s+/)[0] ?? ''
  t.equal(runtime?.ins.args, image, 'the runtime stage is on the same Node image')
  const engines = /^>=(\d+)\.(\d+)/.exec(packageJson.engines.node)
  const major = /^node:(\d+)-bookworm-slim$/.exec(image)?.[1]
  t.ok(Number(major) >= Number(engines?.[1]), `the image's Node (${image}) is one package.json allows (${packageJson.engines.node})`)
  t.equal((await read('.nvmrc')).trim(), major, '.nvmrc names the image\'s Node major')
  const ci = await read('.ci/run')
  t.ok(ci.includes('.nvmrc') && ci.includes('node@'), 'CI brings the Node major of .nvmrc from the npm registry and tests on it')

  const buildStage = all.slice((build?.i ?? 0) + 1, runtime?.i)
  const runtimeStage = all.slice((runtime?.i ?? 0) + 1)
  const runs = (stage: Instruction[]) => stage.filter((i) => i.keyword === 'RUN').map((i) => i.args)
  t.ok(runs(buildStage).some((r) => /\bnpm ci\b/.test(r) && !r.includes('--omit')), 'build: every dependency')
  t.ok(runs(buildStage).some((r) => /\bnpm run build\b/.test(r)), 'build: npm run build')
  t.ok(runs(runtimeStage).some((r) => /\bnpm ci\b.*--omit=dev/.test(r)), 'runtime: production dependencies only')
  t.ok(runtimeStage.some((i) => i.keyword === 'COPY' && /^--from=build\s+\S*dist\S*\s+\S*dist/.test(i.args)), 'runtime: dist/ from the build stage')
  t.notOk(runtimeStage.some((i) => i.keyword === 'COPY' && !i.args.startsWith('--from=') && !/^package(-lock)?\.json/.test(i.args)), 'runtime: no sources copied from the context')

  const env = runtimeStage.filter((i) => i.keyword === 'ENV').map((i) => i.args).join(' ')
  t.match(env, /\bHOST=0\.0\.0\.0\b/)
  t.match(env, /\bDATA_DIR=\/data\b/)
  // The allocator's setting that keeps freed memory from staying in the process (docs/deploying.md).
  const threshold = /\bMALLOC_MMAP_THRESHOLD_=(\d+)\s/.exec(`${packageJson.scripts.start} `)?.[1]
  t.ok(threshold !== undefined, 'npm start sets MALLOC_MMAP_THRESHOLD_')
  t.match(env, new RegExp(`\\bMALLOC_MMAP_THRESHOLD_=${String(threshold)}\\b`), 'the image sets it as npm start does')
  const volume = runtimeStage.findIndex((i) => i.keyword === 'VOLUME')
  t.same(execForm(runtimeStage[volume]?.args ?? ''), ['/data'], 'DATA_DIR is a volume')
  const chown = runtimeStage.findIndex((i) => i.keyword === 'RUN' && /chown\s+(\S+)\s+\/data/.test(i.args))
  t.ok(chown >= 0 && chown < volume, '/data is given to the user before it becomes a volume')
  const owner = /chown\s+([^:\s]+)/.exec(runtimeStage[chown]?.args ?? '')?.[1]
  const user = runtimeStage.filter((i) => i.keyword === 'USER').at(-1)?.args
  t.ok(user !== undefined && !['root', '0'].includes(user.split(':')[0] ?? ''), `runs as a non-root user (${String(user)})`)
  t.equal(owner, user, 'who owns /data')
  t.ok(runtimeStage.some((i) => i.keyword === 'EXPOSE' && i.args === '3000'))
  t.same(execForm(runtimeStage.filter((i) => i.keyword === 'CMD').at(-1)?.args ?? ''), ['node', 'dist/server.js'], 'CMD in exec form: node gets SIGTERM')
  t.notOk(all.some((i) => i.keyword === 'ENTRYPOINT'), 'no shell in between')

  const healthcheck = runtimeStage.find((i) => i.keyword === 'HEALTHCHECK')?.args ?? ''
  const probe = execForm(healthcheck.slice(healthcheck.indexOf('CMD ') + 4))
  t.equal(probe?.[0], 'node', 'the health check uses node (no curl in slim images)')
  t.match(probe?.[2], /\/health\b/)

  t.test('the HEALTHCHECK command', async (t) => {
    const app = await buildTestApp(t, { database: 'any' })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const port = (app.server.address() as AddressInfo).port
    const check = async (p: number): Promise<number> => await run(process.execPath, (probe ?? []).slice(1), { env: cleanEnv({ PORT: String(p) }) })
      .then(() => 0, (err: { code?: number }) => err.code ?? -1)
    t.equal(await check(port), 0, 'healthy when /health answers')
    await app.close()
    t.equal(await check(port), 1, 'unhealthy when nothing listens')
  })
})

t.test('.dockerignore keeps secrets and local state out of the image', async (t) => {
  const ignored = dockerignoreMatcher(await read('.dockerignore'))
  for (const file of ['.env', 'deploy/api.env', 'deploy/db.env', 'node_modules/pg/package.json', 'data/pgdata/PG_VERSION', 'dist/server.js', '.git/HEAD', 'npm-debug.log']) {
    t.ok(ignored(file), `${file} stays out`)
  }
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'server.ts', 'plugins/database/index.ts', 'migrations/001-users.sql', 'deploy/api.env.example']) {
    t.notOk(ignored(file), `${file} goes in`)
  }
  t.throws(() => dockerignoreMatcher('!keep'), /not supported/, 'an exception line is refused rather than misread')
})

t.test('compose.yaml', async (t) => {
  const compose = await read('compose.yaml')
  const nginx = await read('deploy/nginx.conf')
  const services = [...compose.matchAll(/^ {2}([a-z0-9-]+):\s*$/gm)].map((m) => m[1])
  const upstreams = [...nginx.matchAll(/^\s*server\s+([a-z0-9-]+):3000\b/gm)].map((m) => m[1])
  t.ok(upstreams.length >= 2, 'nginx spreads over several instances')
  for (const name of upstreams) t.ok(services.includes(name), `nginx's upstream ${String(name)} is a compose service`)
  t.ok(services.includes('db'), 'a database service')
  t.match(compose, /image: postgres:15\b/, 'PostgreSQL 15, as the service is tested with')
  t.match(compose, /pg_isready/, 'the database has a health check')
  t.equal([...compose.matchAll(/condition: service_healthy/g)].length >= 2, true, 'the service waits for the database, nginx for the service')
  const envFiles = [...compose.matchAll(/^\s*-\s*(deploy\/[\w.-]+\.env)\s*$/gm)].map((m) => m[1] ?? '')
  t.ok(envFiles.length > 0, 'secrets come from env files')
  for (const file of envFiles) {
    await t.resolves(access(path.join(ROOT, `${file}.example`)), `${file} has an example to copy`)
  }
  await t.resolves(access(path.join(ROOT, 'deploy/nginx.conf')))

  // Not parsed by Docker here: this machine's Docker CLI has no compose plugin, and `docker stack
  // config` checks the older Swarm schema, which refuses `name:` and `depends_on: {condition}`.
})
