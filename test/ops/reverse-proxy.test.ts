// The service behind a real nginx: the path prefix, the forwarded headers and the trust decision,
// first with a minimal configuration, then with the one shipped in deploy/nginx.conf in front of
// two instances sharing one database.
import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { NGINX_BIN, nginxInstalled, startNginx, type Nginx } from '../fixtures/nginx.js'
import { adminAuth, buildTestApp, captureLogs, createTestDatabase, testDatabases, type TestApp } from '../helper.js'

const inCi = (process.env.CI ?? '') !== '' && process.env.CI !== 'false'
const missing = `${NGINX_BIN} is missing: install nginx (Debian: apt-get install nginx-light; .ci/run does this)`

async function listen (app: TestApp): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

async function nginx (t: Test, http: (port: number) => string): Promise<Nginx> {
  const server = await startNginx(http)
  t.teardown(server.stop)
  return server
}

// The brief form of a prefixed location, headers as in deploy/nginx.conf.
const prefixed = (service: number) => (port: number): string => `
  server {
    listen 127.0.0.1:${port};
    location /netauto/ {
      proxy_pass http://127.0.0.1:${service}/;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Prefix /netauto;
    }
  }`

if (!nginxInstalled()) {
  if (inCi) t.fail(`The reverse-proxy tests need a real nginx: ${missing}`)
  else t.plan(0, `skipped locally: ${missing}`)
} else {
  t.test('under a path prefix behind nginx, with TRUST_PROXY=loopback', async (t) => {
    const app = await buildTestApp(t, { database: 'any', env: { TRUST_PROXY: 'loopback' } })
    const proxy = await nginx(t, prefixed(await listen(app)))

    const health = await fetch(`${proxy.url}/netauto/health`)
    t.equal(health.status, 200)
    t.same(await health.json(), { status: 'ok' })

    const doc = await (await fetch(`${proxy.url}/netauto/openapi.json`)).json() as { servers?: unknown }
    t.same(doc.servers, [{ url: `http://127.0.0.1:${proxy.port}/netauto` }], 'the address the client used, prefix included')

    const users = await fetch(`${proxy.url}/netauto/users`, { headers: { authorization: adminAuth } })
    t.equal(users.status, 200, 'credentials pass through the proxy')
    t.match(await users.json(), { items: [{ username: 'admin' }] })

    const unknown = await fetch(`${proxy.url}/netauto/no/such/route`)
    t.equal(unknown.status, 404)
    t.match(await unknown.json(), { message: 'Route GET:/no/such/route not found' }, 'the service sees the path without the prefix')

    const ui = await fetch(`${proxy.url}/netauto/docs/`)
    t.equal(ui.status, 200)
    t.notMatch(await ui.text(), /(src|href)="\/(?!\/)/, 'Swagger UI refers to its assets relatively, so they load under the prefix')
  })

  t.test('without TRUST_PROXY the forwarded headers are ignored', async (t) => {
    const app = await buildTestApp(t, { database: 'any' })
    const proxy = await nginx(t, prefixed(await listen(app)))
    const response = await fetch(`${proxy.url}/netauto/openapi.json`)
    t.equal(response.status, 200)
    const doc = await response.json() as { servers?: unknown }
    t.same(doc.servers, [{ url: '/', description: 'This service, where the document was read' }], 'a relative server: links stay relative')
  })

  t.test('deploy/nginx.conf in front of two instances sharing one database', async (t) => {
    // Two instances need a database server; on the embedded one a single instance stands for both.
    const kind = testDatabases.includes('postgres') ? 'postgres' : 'embedded'
    const database = await createTestDatabase(t, kind, { migrated: true })
    const env = { TRUST_PROXY: 'loopback', LOG_LEVEL: 'info' }
    const logs = [captureLogs(), captureLogs()] as const
    const first = await buildTestApp(t, { database, env, logStream: logs[0] })
    const second = kind === 'postgres' ? await buildTestApp(t, { database, env, logStream: logs[1] }) : first
    const ports = [await listen(first), second === first ? undefined : await listen(second)]

    const shipped = await readFile(fileURLToPath(new URL('../../deploy/nginx.conf', import.meta.url)), 'utf8')
    const replace = (text: string, from: string, to: string): string => {
      if (!text.includes(from)) throw new Error(`deploy/nginx.conf no longer contains "${from}": update this test`)
      return text.replace(from, to)
    }
    const proxy = await nginx(t, (port) => {
      let conf = replace(shipped, 'listen 80;', `listen 127.0.0.1:${port};`)
      conf = replace(conf, 'server api-1:3000', `server 127.0.0.1:${ports[0] ?? 0}`)
      return replace(conf, 'server api-2:3000', `server 127.0.0.1:${ports[1] ?? ports[0] ?? 0}`)
    })

    const root = await (await fetch(`${proxy.url}/openapi.json`)).json() as { servers?: unknown }
    t.same(root.servers, [{ url: `http://127.0.0.1:${proxy.port}` }], 'at the root: no prefix')
    const under = await (await fetch(`${proxy.url}/netauto/openapi.json`)).json() as { servers?: unknown }
    t.same(under.servers, [{ url: `http://127.0.0.1:${proxy.port}/netauto` }], 'under /netauto: the prefix')

    // A user made through one instance logs in on every instance: they share the database.
    const created = await fetch(`${proxy.url}/netauto/users`, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'viewer', password: 'viewer-password' })
    })
    t.equal(created.status, 200)
    const viewer = 'Basic ' + Buffer.from('viewer:viewer-password').toString('base64')
    for (let i = 0; i < 6; i++) {
      const answer = await fetch(`${proxy.url}/configuration_manager/ismaintenance`, { headers: { authorization: viewer } })
      t.equal(answer.status, 200, `request ${i + 1} as the new user`)
    }
    if (second !== first) {
      const served = logs.map((l) => l.lines.filter((line) => line.includes('"url":"/configuration_manager/ismaintenance"')).length)
      t.ok(served[0] > 0 && served[1] > 0, `both instances served requests (${served.join(' + ')})`)
    }

    // The client's address reaches the service through X-Forwarded-For.
    const requestId = 'reverse-proxy-forwarded-for'
    await fetch(`${proxy.url}/health`, { headers: { 'x-forwarded-for': '203.0.113.7', 'x-request-id': requestId } })
    const incoming = logs.flatMap((l) => l.lines).map((line) => JSON.parse(line) as { reqId?: string, msg?: string, req?: { remoteAddress?: string } })
      .find((line) => line.reqId === requestId && line.msg === 'incoming request')
    t.equal(incoming?.req?.remoteAddress, '203.0.113.7')

    // A body above BODY_LIMIT is refused by nginx itself, in the service's error shape, every time.
    for (let i = 0; i < 5; i++) {
      const large = await fetch(`${proxy.url}/netauto/users`, {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'large', password: 'x'.repeat(1536 * 1024) })
      })
      t.equal(large.status, 413, `large body ${i + 1}`)
      t.match(large.headers.get('content-type'), /^application\/json/)
      t.same(await large.json(), { statusCode: 413, error: 'Payload Too Large', message: 'Request body is too large', code: 'FST_ERR_CTP_BODY_TOO_LARGE' })
    }
    // One just under the limit reaches the service (and gets its answer: the password is too long).
    const justUnder = await fetch(`${proxy.url}/users`, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'large', password: 'x'.repeat(1024 * 1024 - 64) })
    })
    t.equal(justUnder.status, 400)
    t.match(await justUnder.json(), { statusCode: 400, message: /password/ })
  })
}
