import t from 'tap'
import { CallQueue, CallQueueRefusal } from '../../../lib/orchestrator/call-queue.js'

t.test('slots are taken in order; a release admits the next waiting call', async (t) => {
  const queue = new CallQueue({ slots: 1, maxWaiting: 2, maxWaitMs: 60_000 })
  const first = await queue.acquire()
  const order: string[] = []
  const second = queue.acquire().then((release) => { order.push('second'); return release })
  const third = queue.acquire().then((release) => { order.push('third'); return release })
  t.equal(queue.running, 1)
  t.equal(queue.waiting, 2)
  first()
  first() // a second release changes nothing
  ;(await second)()
  ;(await third)()
  t.same(order, ['second', 'third'])
  t.equal(queue.running, 0)
  t.equal(queue.waiting, 0)
})

t.test('a full line refuses at once; a wait past its limit is refused and leaves the line', async (t) => {
  const queue = new CallQueue({ slots: 1, maxWaiting: 1, maxWaitMs: 20 })
  const held = await queue.acquire()
  const waited = queue.acquire().catch((err: unknown) => err)
  const full = await queue.acquire().catch((err: unknown) => err)
  t.ok(full instanceof CallQueueRefusal)
  t.equal((full as CallQueueRefusal).reason, 'full')
  const late = await waited
  t.equal((late as CallQueueRefusal).reason, 'waited')
  t.match((late as Error).message, /waited too long/)
  t.equal(queue.waiting, 0)
  held()
  t.equal(queue.running, 0)
  const none = new CallQueue({ slots: 1, maxWaiting: 0, maxWaitMs: 20 })
  const only = await none.acquire()
  t.match(await none.acquire().catch((err: unknown) => err), { reason: 'full', message: /queue is full/ })
  only()
})
