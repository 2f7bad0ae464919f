// A flood of idle connections against a process with few file descriptors (512, as `ulimit -n`
// gives it): the process stays up, keeps serving the connections it holds, closes the ones past
// its limit at once, and answers new ones again when the flood goes.
import t from 'tap'
import net from 'node:net'
import path from 'node:path'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { ADMIN, createTestDatabase } from '../helper.js'
import { until } from '../helpers/until.js'
import { imageBuild, startBuiltServer } from './built-server.js'

const DESCRIPTORS = 512
const FLOOD = 1000
/** Generous: the machine is busy; the waits below end as soon as their condition holds. */
const DEADLINE_MS = 120_000

/** A keep-alive connection that sends GET /health and resolves with the status line of its answer. */
function healthOver (socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN)
      if (end >= 0 && text.length >= end + 4 + length) {
        socket.off('data', onData)
        resolve(text.split('\r\n')[0] ?? '')
      }
    }
    socket.on('data', onData)
    socket.once('close', () => { reject(new Error(`closed before the answer: ${text}`)) })
    socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n')
  })
}

t.test(`a flood of ${FLOOD} idle connections at ${DESCRIPTORS} descriptors`, async (t) => {
  const build = await imageBuild()
  const database = await createTestDatabase(t, 'any', { migrated: true })
  const server = await startBuiltServer(path.join(build, 'dist'), build, {
    ...database.env,
    ADMIN_PASSWORD: ADMIN.password,
    // Load shedding on (its sampler runs), never shedding here.
    LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: '600000',
    LOAD_SHEDDING_MAX_HEAP_BYTES: String(1024 ** 4),
    // The flood stays until the test lets it go.
    HTTP_HEADERS_TIMEOUT_MS: '600000',
    HTTP_REQUEST_TIMEOUT_MS: '600000',
    HTTP_KEEP_ALIVE_TIMEOUT_MS: '600000'
  }, { wrapper: ['prlimit', `--nofile=${DESCRIPTORS}:${DESCRIPTORS}`] })
  t.teardown(server.kill)

  const held = net.connect(server.port, '127.0.0.1')
  t.teardown(() => { held.destroy() })
  await once(held, 'connect')
  t.equal(await healthOver(held), 'HTTP/1.1 200 OK', 'a connection held before the flood')

  const flood: net.Socket[] = []
  t.teardown(() => { for (const socket of flood) socket.destroy() })
  let closedByServer = 0
  for (let i = 0; i < FLOOD; i++) {
    const socket = net.connect(server.port, '127.0.0.1')
    socket.on('error', () => {})
    socket.once('close', () => { closedByServer++ })
    flood.push(socket)
    // Connected or refused before the next: the flood is as fast as the process takes it.
    await Promise.race([once(socket, 'connect'), once(socket, 'close')])
  }
  const refused = await Promise.race([
    server.waitForLine((line) => line.msg?.startsWith('connections refused') === true),
    sleep(DEADLINE_MS, undefined, { ref: false })
  ])
  t.ok(refused !== undefined, 'the process says it refused connections')
  // It says so at the first refusal; the closes of the connections past its limit reach this side
  // as the process takes them from the backlog, a moment after.
  await until(() => FLOOD - closedByServer < DESCRIPTORS, 'the connections past the limit are closed', DEADLINE_MS)
  t.equal(server.child.exitCode, null, 'the process is still running')
  t.ok(closedByServer > 0, `connections past the limit were closed (${closedByServer})`)
  t.ok(FLOOD - closedByServer < DESCRIPTORS, `the connections held stay below the descriptor limit (${FLOOD - closedByServer})`)
  t.equal(await healthOver(held), 'HTTP/1.1 200 OK', 'the connection held still gets answers')

  for (const socket of flood) socket.destroy()
  // New connections are answered again once the flood is gone.
  let status = ''
  await until(async () => {
    const fresh = net.connect(server.port, '127.0.0.1')
    fresh.on('error', () => {})
    status = await Promise.race([once(fresh, 'connect'), once(fresh, 'close')])
      .then(async () => await healthOver(fresh))
      .catch((err: Error) => err.message)
    fresh.destroy()
    return status === 'HTTP/1.1 200 OK'
  }, 'a new connection is answered after the flood', DEADLINE_MS)
  t.equal(status, 'HTTP/1.1 200 OK', 'a new connection is answered after the flood')
  t.equal(server.child.exitCode, null, 'and the process never exited')
})
