// SIGTERM (docker stop, a rolling update) while a request is in flight: the listener closes at
// once, the request still gets its normal answer, and the process exits 0.
import t from 'tap'
import net from 'node:net'
import path from 'node:path'
import pg from 'pg'
import { ADMIN, adminAuth, createTestDatabase } from '../helper.js'
import { until } from '../helpers/until.js'
import { imageBuild, startBuiltServer } from './built-server.js'

// The build it makes (or waits for) compiles the service and the studio page: the OpenAPI
// document on a fresh embedded database, its types, Vite. Minutes on a busy machine.
t.setTimeout(600_000)

const serverUrl = process.env.TEST_DATABASE_URL ?? ''

/** Resolves with the connection error code, or 'connected'. */
const tryConnect = async (port: number): Promise<string> => await new Promise((resolve) => {
  const socket = net.connect(port, '127.0.0.1')
  socket.once('connect', () => { socket.destroy(); resolve('connected') })
  socket.once('error', (err: NodeJS.ErrnoException) => { resolve(err.code ?? err.message) })
})

t.test('SIGTERM with a request in flight', { skip: serverUrl === '' ? 'needs TEST_DATABASE_URL (a PostgreSQL server)' : false }, async (t) => {
  const build = await imageBuild()
  const database = await createTestDatabase(t, 'postgres')
  const server = await startBuiltServer(path.join(build, 'dist'), build, { ...database.env, ADMIN_PASSWORD: ADMIN.password, TRUST_PROXY: 'loopback' })
  t.teardown(server.kill)

  // A POST whose body arrives in two parts, over a raw socket, so we decide when it completes.
  const body = JSON.stringify({ username: 'in-flight', password: 'in-flight-password' })
  const half = Math.floor(body.length / 2)
  const socket = net.connect(server.port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  let response = ''
  socket.on('data', (chunk: Buffer) => { response += chunk.toString() })
  const ended = new Promise<void>((resolve) => { socket.once('close', () => { resolve() }) })
  socket.write([
    'POST /users HTTP/1.1',
    `Host: 127.0.0.1:${server.port}`,
    `Authorization: ${adminAuth}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'X-Request-Id: in-flight',
    'Connection: close',
    '', ''
  ].join('\r\n') + body.slice(0, half))
  await server.waitForLine((line) => line.reqId === 'in-flight' && line.msg === 'incoming request')

  server.child.kill('SIGTERM')
  await server.waitForLine((line) => line.msg === 'closing')

  // Bounded: the listener closes as soon as the close begins. A connection the kernel took while
  // the listener was closing is reset (ECONNRESET): not served either; the next attempt is refused.
  let attempt = 'connected'
  await until(async () => {
    attempt = await tryConnect(server.port)
    return attempt !== 'connected' && attempt !== 'ECONNRESET'
  }, 'a new connection is no longer taken', 5_000)
  t.equal(attempt, 'ECONNREFUSED', 'new connections are refused')
  t.equal(server.child.exitCode, null, 'still running: the request is not answered yet')
  t.equal(response, '', 'nothing answered yet')

  socket.write(body.slice(half))
  await ended
  const [head = '', payload = ''] = response.split('\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 200 /, 'the in-flight request gets its normal answer')
  t.match(JSON.parse(payload), { username: 'in-flight', roles: [] })

  const exit = await server.exited
  t.same(exit, { code: 0, signal: null }, 'then the process exits 0')
  if (exit.code !== 0) t.comment(server.output())

  // The write was committed before the pool closed.
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL })
  await client.connect()
  t.teardown(async () => { await client.end() })
  const { rows } = await client.query<{ username: string }>('SELECT username FROM users WHERE username = $1', ['in-flight'])
  t.same(rows, [{ username: 'in-flight' }])
})
