import t from 'tap'
import { isObjectId, newObjectId, requestIdGenerator } from '../../../lib/http/ids.js'

t.test('ids are 24 lowercase hex digits, led by the creation time in seconds', async (t) => {
  const id = newObjectId(Date.UTC(2024, 0, 2, 3, 4, 5))
  t.match(id, /^[0-9a-f]{24}$/)
  t.ok(isObjectId(id))
  t.equal(parseInt(id.slice(0, 8), 16), Date.UTC(2024, 0, 2, 3, 4, 5) / 1000)
})

t.test('ids made in the same second by one process all differ, in counter order', async (t) => {
  const now = Date.now()
  const ids = Array.from({ length: 10_000 }, () => newObjectId(now))
  t.equal(new Set(ids).size, ids.length)
  t.equal(new Set(ids.map((id) => id.slice(0, 18))).size, 1, 'time and process parts are shared')
  const counters = ids.map((id) => parseInt(id.slice(18), 16))
  t.ok(counters.every((c, i) => i === 0 || c === ((counters[i - 1] ?? 0) + 1) % 0x1000000), 'the counter steps by one, wrapping')
})

t.test('isObjectId refuses anything else', async (t) => {
  for (const bad of ['', 'abc', 'A'.repeat(24), '0'.repeat(23), '0'.repeat(25), 'g'.repeat(24), ` ${'0'.repeat(23)}`]) {
    t.notOk(isObjectId(bad), JSON.stringify(bad))
  }
})

t.test('request ids share a per-generator random part and count up after it', async (t) => {
  const next = requestIdGenerator()
  const ids = Array.from({ length: 1000 }, () => next())
  t.equal(new Set(ids).size, ids.length)
  t.ok(ids.every((id) => /^[0-9a-f]{12}-[0-9a-z]+$/.test(id)))
  t.equal(ids[0]?.split('-')[1], '1')
  t.equal(ids[999]?.split('-')[1], (1000).toString(36))
  t.not(requestIdGenerator()().split('-')[0], ids[0]?.split('-')[0], 'another process (generator) has another random part')
})
