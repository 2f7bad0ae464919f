import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ConfigError, loadConfig } from '../../../plugins/core/config.js'

t.test('defaults', async (t) => {
  const config = loadConfig({})
  t.match(config, { PORT: 3000, HOST: '127.0.0.1', DATA_DIR: './data', ADMIN_USERNAME: 'admin', LOG_LEVEL: 'info', BODY_LIMIT: 1048576 })
  t.equal(config.DATABASE_URL, undefined)
  t.equal(config.ADMIN_PASSWORD, undefined)
  t.equal(config.CONFIG_MANAGER_MAINTENANCE, undefined)
  t.equal(config.CONFIG_MANAGER_BUNDLE_VERSION, '0.1.0')
  t.equal(config.tracing, undefined, 'traces off')
  t.match(config, { HTTP_REQUEST_TIMEOUT_MS: 60_000, HTTP_HEADERS_TIMEOUT_MS: 30_000, HTTP_KEEP_ALIVE_TIMEOUT_MS: 72_000, HTTP_SEND_TIMEOUT_MS: 60_000, HTTP_MAX_CONNECTIONS: 0 })
})

t.test('traces: on with an OTLP endpoint, off again with OTEL_SDK_DISABLED', async (t) => {
  const on = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'api-key=k1', OTEL_SERVICE_NAME: 'api-eu' })
  t.same(on.tracing, { exporter: 'otlp', url: 'http://collector:4318/v1/traces', headers: { 'api-key': 'k1' }, serviceName: 'api-eu' })
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing, undefined)
})

t.test('empty values mean unset; values are typed', async (t) => {
  const config = loadConfig({ DATABASE_URL: '', PORT: '8080', CONFIG_MANAGER_MAINTENANCE: 'true' })
  t.equal(config.DATABASE_URL, undefined)
  t.equal(config.PORT, 8080)
  t.equal(config.CONFIG_MANAGER_MAINTENANCE, true)
})

t.test('a bad value stops the start with a message naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ PUBLIC_URL: 'not a url' }, /PUBLIC_URL/],
    [{ CONFIG_MANAGER_MAINTENANCE: 'maybe' }, /CONFIG_MANAGER_MAINTENANCE/],
    [{ CONFIG_MANAGER_BUNDLE_VERSION: 'latest' }, /CONFIG_MANAGER_BUNDLE_VERSION/],
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, /OTEL_TRACES_EXPORTER/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'api-key' }, /OTEL_EXPORTER_OTLP_HEADERS/],
    [{ OTEL_SDK_DISABLED: 'yes please' }, /OTEL_SDK_DISABLED/],
    [{ HTTP_HEADERS_TIMEOUT_MS: '90000', HTTP_REQUEST_TIMEOUT_MS: '60000' }, /HTTP_HEADERS_TIMEOUT_MS must not be above HTTP_REQUEST_TIMEOUT_MS/],
    [{ HTTP_SEND_TIMEOUT_MS: '0' }, /HTTP_SEND_TIMEOUT_MS/]
  ]
  for (const [env, name] of cases) {
    let error: unknown
    try { loadConfig(env) } catch (err) { error = err }
    t.ok(error instanceof ConfigError, `${JSON.stringify(env)} is refused`)
    t.match((error as Error).message, name)
  }
})

t.test('.env fills what the environment lacks; the environment wins', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'config-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await writeFile(path.join(dir, '.env'), 'PORT=4000\nLOG_LEVEL=debug\n')
  const cwd = process.cwd()
  process.chdir(dir)
  t.teardown(() => { process.chdir(cwd) })
  const config = loadConfig({ LOG_LEVEL: 'warn' }, { dotenv: true })
  t.equal(config.PORT, 4000)
  t.equal(config.LOG_LEVEL, 'warn')
})

t.test('Git: special paths an operator allows, and the largest provider answer', async (t) => {
  const defaults = loadConfig({})
  t.same([...defaults.gitAllowedSpecialPaths], [], 'none allowed by default')
  t.equal(defaults.GIT_MAX_RESPONSE_BYTES, 256 * 1024 * 1024)
  t.same([...loadConfig({ GIT_ALLOWED_SPECIAL_PATHS: '.github, .gitlab-ci.yml' }).gitAllowedSpecialPaths].sort(), ['.github', '.gitlab-ci.yml'])
  t.throws(() => loadConfig({ GIT_ALLOWED_SPECIAL_PATHS: '.git' }), new ConfigError('Invalid configuration: GIT_ALLOWED_SPECIAL_PATHS may only name .gitmodules, .github, .gitlab-ci.yml (got ".git")'))
  t.throws(() => loadConfig({ GIT_MAX_RESPONSE_BYTES: '10' }), ConfigError, 'a limit too small to hold an advertisement')
})
