// The write path's queue without a database: batches, its bound, failed writes retried in order,
// and what close() writes and loses.
import t from 'tap'
import { AuditQueue, type AuditQueueOptions } from '../../../lib/audit/queue.js'
import { until } from '../../helpers/until.js'

function queue (over: Partial<AuditQueueOptions<number>> = {}) {
  const batches: number[][] = []
  const errors: Array<{ queued: number }> = []
  let failing = false
  const q = new AuditQueue<number>({
    maxQueued: 10,
    batchSize: 4,
    intervalMs: 5,
    maxRetryMs: 20,
    write: async (events) => {
      if (failing) throw new Error('database down')
      batches.push([...events])
    },
    onWriteError: (_err, queued) => { errors.push({ queued }) },
    ...over
  })
  return { q, batches, errors, fail: (value: boolean) => { failing = value } }
}

t.test('a full batch is written at once, the rest after the interval, in order', async (t) => {
  const { q, batches } = queue()
  for (let i = 1; i <= 6; i++) q.push(i)
  await until(() => batches.flat().length === 6)
  t.same(batches, [[1, 2, 3, 4], [5, 6]])
  t.same(q.state(), { queued: 0, reserved: 0, written: 6, dropped: 0, writeFailures: 0 })
})

t.test('while the database is down: events stay queued, bounded, the excess counted, and are written once it is back', async (t) => {
  const { q, batches, errors, fail } = queue()
  fail(true)
  for (let i = 1; i <= 14; i++) q.push(i)
  await until(() => errors.length >= 2)
  t.equal(q.push(15), false, 'past the bound, a push is refused')
  t.equal(q.state().queued, 10, 'never more than the bound')
  t.equal(q.state().dropped, 5)
  t.ok(q.state().writeFailures >= 2, 'failures counted, retried')
  t.same(batches, [])
  fail(false)
  await until(() => q.state().queued === 0)
  t.same(batches.flat(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'written in order, none duplicated')
})

t.test('events being written keep their places: a failed write comes back without pushing past the bound', async (t) => {
  let release: (() => void) | undefined
  const { q, fail } = queue({
    write: async () => {
      if (release === undefined) await new Promise<void>((resolve) => { release = resolve })
      throw new Error('timed out')
    }
  })
  fail(true)
  for (let i = 1; i <= 4; i++) q.push(i) // a full batch: the write starts, and hangs
  await until(() => release !== undefined)
  let taken = 0
  for (let i = 5; i <= 14; i++) if (q.push(i)) taken++
  t.equal(taken, 6, 'the 4 in flight hold their places: 6 more fit')
  release?.()
  await until(() => q.state().writeFailures === 1)
  t.equal(q.state().queued, 10)
  t.equal(q.state().dropped, 4, 'the 4 refused at push, none after')
  t.same(await q.close(), { lost: 10 })
})

t.test('a reserved place is always taken; without one, an event is taken only below maxUnreserved', async (t) => {
  const { q, batches, fail } = queue({ maxUnreserved: 5 })
  fail(true)
  for (let i = 1; i <= 3; i++) t.ok(q.push(i), `unreserved ${i} taken`)
  const reservations = [1, 2, 3, 4, 5, 6, 7, 8].map(() => q.reserve())
  t.same(reservations, [true, true, true, true, true, true, true, false], 'places reserved up to the bound, then refused')
  t.equal(q.push(100), false, 'an event without a reservation is dropped once the queue holds maxUnreserved')
  t.same(q.state(), { queued: 3, reserved: 7, written: 0, dropped: 1, writeFailures: q.state().writeFailures })
  for (let i = 4; i <= 9; i++) t.ok(q.push(i, true), `reserved ${i} taken`)
  q.release()
  t.equal(q.state().reserved, 0, 'the unused reservation given back')
  t.equal(q.reserve(), true, 'its place free again')
  q.release()
  fail(false)
  await until(() => q.state().queued === 0)
  t.same(batches.flat(), [1, 2, 3, 4, 5, 6, 7, 8, 9], 'every reserved event written, in order')
  t.equal(q.state().dropped, 1)
})

t.test('close writes what is queued; what the database cannot take is counted as lost, and nothing is taken after', async (t) => {
  const ok = queue()
  ok.q.push(1)
  ok.q.push(2)
  t.same(await ok.q.close(), { lost: 0 })
  t.same(ok.batches, [[1, 2]])
  t.equal(ok.q.push(3), false, 'closed')

  const down = queue()
  down.fail(true)
  down.q.push(1)
  t.same(await down.q.close(), { lost: 1 })
  t.equal(down.q.state().dropped, 1)
})

t.test('flushes never overlap: a flush during one waits for it', async (t) => {
  let running = 0
  let most = 0
  const { q } = queue({
    write: async () => {
      running++
      most = Math.max(most, running)
      await new Promise((resolve) => setImmediate(resolve))
      running--
    }
  })
  for (let i = 0; i < 9; i++) q.push(i)
  await Promise.all([q.flush(), q.flush(), q.flush()])
  t.equal(most, 1)
  t.equal(q.state().written, 9)
})
