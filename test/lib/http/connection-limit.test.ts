import t from 'tap'
import { ASSUMED_DESCRIPTOR_LIMIT, connectionLimit, openFilesLimit, reservedDescriptors } from '../../../lib/http/connection-limit.js'

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`

t.test('the soft limit on open files is read from /proc/self/limits', async (t) => {
  t.equal(openFilesLimit(LIMITS), 1024)
  t.equal(openFilesLimit(LIMITS.replace('1024     ', 'unlimited')), Infinity)
  t.equal(openFilesLimit('Max cpu time  unlimited  unlimited  seconds\n'), undefined, 'no such line')
  t.equal(openFilesLimit('Max open files  many  many  files\n'), undefined, 'not a number')
})

t.test('the reserve counts the process, the database pool, Git and four adapter pools', async (t) => {
  t.equal(reservedDescriptors({ databasePool: 10, gitOperations: 16, adapterPool: 10 }), 128 + 10 + 32 + 40)
})

t.test('the connection limit stays below the descriptors, after the reserve', async (t) => {
  t.same(connectionLimit(1024, 210, 0), { connections: 814, descriptors: 1024, descriptorsRead: true })
  t.same(connectionLimit(512, 210, 0), { connections: 302, descriptors: 512, descriptorsRead: true })
  t.equal(connectionLimit(512, 210, 100).connections, 100, 'a configured limit below it is kept')
  const over = connectionLimit(512, 210, 5000)
  t.equal(over.connections, 302, 'a configured limit above it is lowered')
  t.match(over.warning, /HTTP_MAX_CONNECTIONS \(5000\)/)
  const low = connectionLimit(256, 210, 0)
  t.equal(low.connections, 64, 'a quarter of a limit the reserve would almost fill')
  t.match(low.warning, /ulimit -n/)
  t.equal(connectionLimit(undefined, 210, 0).connections, ASSUMED_DESCRIPTOR_LIMIT - 210, 'a limit that cannot be read is assumed')
  t.equal(connectionLimit(undefined, 210, 0).descriptorsRead, false)
  t.equal(connectionLimit(Infinity, 210, 0).connections, Infinity, 'no limit to keep below')
  t.equal(connectionLimit(Infinity, 210, 50).connections, 50)
})
