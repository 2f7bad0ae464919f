// What a client's connection may hold: a request whose body never comes, or whose headers never
// end, is closed at its deadline; an answer the client never reads is cut, its memory let go; a
// refusal sent before the body (401, 413) closes the connection instead of waiting for the body;
// a failed accept (out of descriptors) is never fatal.
import t, { type Test } from 'tap'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { once } from 'node:events'
import { adminAuth, buildTestApp, type TestApp } from '../../helper.js'

/** A log destination whose `seen` resolves once a line contains `text` (or rejects past the deadline). */
function watchedLogs (): { lines: string[], write: (line: string) => void, seen: (text: string) => Promise<void> } {
  const lines: string[] = []
  const waiters: Array<{ text: string, resolve: () => void }> = []
  return {
    lines,
    write: (line) => {
      lines.push(line)
      for (const waiter of waiters.filter((w) => line.includes(w.text))) waiter.resolve()
    },
    seen: async (text) => {
      if (lines.some((line) => line.includes(text))) return
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => { reject(new Error(`no log line with "${text}" within ${DEADLINE_MS} ms`)) }, DEADLINE_MS)
        waiters.push({ text, resolve: () => { clearTimeout(timer); resolve() } })
      })
    }
  }
}

/** Generous: the machine is busy; every wait below ends as soon as its condition holds. */
const DEADLINE_MS = 60_000

async function listen (app: TestApp): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

interface RawExchange {
  socket: net.Socket
  /** Everything received so far. */
  received: () => Buffer
  /** Resolves when the server has closed the connection (or rejects past the deadline). */
  closed: Promise<void>
}

/** A raw connection that sends `head` (and reads everything, unless `read` is false). */
async function rawRequest (t: Test, port: number, head: string, options: { read?: boolean } = {}): Promise<RawExchange> {
  const socket = net.connect(port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  await once(socket, 'connect')
  const chunks: Buffer[] = []
  if (options.read !== false) socket.on('data', (chunk: Buffer) => { chunks.push(chunk) })
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`the server did not close the connection within ${DEADLINE_MS} ms`)) }, DEADLINE_MS)
    socket.once('close', () => { clearTimeout(timer); resolve() })
  })
  if (head !== '') socket.write(head)
  return { socket, received: () => Buffer.concat(chunks), closed }
}

const headOf = (response: Buffer): string => response.toString('latin1').split('\r\n\r\n')[0] ?? ''

// One service for every case, with short deadlines (the defaults are a minute or so).
const logs = watchedLogs()
const app = await buildTestApp(t, {
  env: {
    HTTP_REQUEST_TIMEOUT_MS: '1000',
    HTTP_HEADERS_TIMEOUT_MS: '500',
    HTTP_KEEP_ALIVE_TIMEOUT_MS: '500',
    HTTP_SEND_TIMEOUT_MS: '2000',
    BODY_LIMIT: '131072',
    LOG_LEVEL: 'warn'
  },
  logStream: logs
})
const port = await listen(app)

t.test('a request whose body never comes is answered 408 and closed at HTTP_REQUEST_TIMEOUT_MS', async (t) => {
  const started = Date.now()
  const exchange = await rawRequest(t, port, [
    'POST /users HTTP/1.1', 'Host: localhost', `Authorization: ${adminAuth}`,
    'Content-Type: application/json', 'Content-Length: 100', '', '{"username":'
  ].join('\r\n'))
  await exchange.closed
  t.match(headOf(exchange.received()), /^HTTP\/1\.1 408 /, 'answered 408')
  t.ok(Date.now() - started >= 900, 'not before the deadline')
})

t.test('a connection that never sends its headers is closed at HTTP_HEADERS_TIMEOUT_MS', async (t) => {
  const idle = await rawRequest(t, port, '')
  const halfway = await rawRequest(t, port, 'GET /health HTTP/1.1\r\nHost: localhost\r\n')
  await idle.closed
  await halfway.closed
  t.pass('both closed')
})

t.test('an idle keep-alive connection is closed at HTTP_KEEP_ALIVE_TIMEOUT_MS', async (t) => {
  const exchange = await rawRequest(t, port, 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n')
  await exchange.closed
  t.match(headOf(exchange.received()), /^HTTP\/1\.1 200 /)
  t.notMatch(headOf(exchange.received()), /connection: close/i, 'kept alive, then closed when idle')
})

t.test('an answer the client never reads is cut after HTTP_SEND_TIMEOUT_MS', async (t) => {
  // A list page of about 7 MiB: more than the kernel's socket buffers take (4 MiB at most here).
  const meta = { blob: 'x'.repeat(65_000) }
  const description = 'd'.repeat(10_000)
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(Array.from({ length: 10 }, async (_, i) => {
      const response = await app.inject({
        method: 'POST',
        url: '/studio/component-groups',
        headers: { authorization: adminAuth },
        payload: { componentGroup: { name: `big ${batch * 10 + i}`, gbacRead: [], members: [], description, meta } }
      })
      if (response.statusCode !== 200) throw new Error(response.body)
    }))
  }
  const request = `GET /studio/component-groups?limit=100 HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${adminAuth}\r\n\r\n`

  const unread = await rawRequest(t, port, request, { read: false })
  unread.socket.pause()
  await logs.seen('answers cut')
  t.pass('the server says it cut the answer')

  // Read now: what the kernel had taken arrives, then the end, well short of the answer.
  const chunks: Buffer[] = []
  unread.socket.on('data', (chunk: Buffer) => { chunks.push(chunk) })
  unread.socket.resume()
  await unread.closed
  const received = Buffer.concat(chunks)
  const length = Number(/content-length: (\d+)/i.exec(headOf(received))?.[1])
  t.ok(length > 6 * 1024 * 1024, `a large answer (${length} bytes)`)
  t.ok(received.length < length, `cut short: ${received.length} bytes received`)

  // A client that reads gets the whole of it.
  const reader = await rawRequest(t, port, request.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'))
  await reader.closed
  const whole = reader.received()
  const wholeLength = Number(/content-length: (\d+)/i.exec(headOf(whole))?.[1])
  t.equal(whole.length - headOf(whole).length - 4, wholeLength, 'a reading client gets every byte')
})

t.test('a 401 or 413 is answered before the body, with Connection: close', async (t) => {
  const anonymous = await rawRequest(t, port, [
    'POST /users HTTP/1.1', 'Host: localhost', 'Content-Type: application/json', `Content-Length: ${100 * 1024 * 1024}`, '', ''
  ].join('\r\n'))
  await anonymous.closed
  const head = headOf(anonymous.received())
  t.match(head, /^HTTP\/1\.1 401 /, '401 without a byte of the body sent')
  t.match(head, /\r\nconnection: close\r\n/i)

  const tooLarge = await rawRequest(t, port, [
    'POST /users HTTP/1.1', 'Host: localhost', `Authorization: ${adminAuth}`, 'Content-Type: application/json', 'Content-Length: 1000000', '', ''
  ].join('\r\n'))
  await tooLarge.closed
  t.match(headOf(tooLarge.received()), /^HTTP\/1\.1 413 /, '413 without a byte of the body sent')
  t.match(headOf(tooLarge.received()), /\r\nconnection: close\r\n/i)

  // An ordinary request keeps its connection.
  const response = await fetch(`http://127.0.0.1:${port}/users`, { headers: { authorization: adminAuth } })
  t.equal(response.status, 200)
  t.equal(response.headers.get('connection'), 'keep-alive')
  await response.arrayBuffer()
})

t.test('an accept that fails for want of descriptors is logged, not fatal', async (t) => {
  const failure = Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', errno: -24, syscall: 'accept' })
  t.doesNotThrow(() => app.server.emit('error', failure))
  // Logged with the other refusals of its interval (at most one summary line every 10 s).
  await logs.seen('connections refused')
  t.pass('logged')
  const response = await fetch(`http://127.0.0.1:${port}/health`)
  t.equal(response.status, 200, 'still serving')
})
