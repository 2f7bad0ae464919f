import t from 'tap'
import { EventEmitter } from 'node:events'
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

t.test('a caller that leaves while waiting leaves the line at once; one already gone never joins it', async (t) => {
  const caller = () => Object.assign(new EventEmitter(), { destroyed: false })
  const queue = new CallQueue({ slots: 1, maxWaiting: 5, maxWaitMs: 60_000 })
  const held = await queue.acquire(caller())
  const leaving = caller()
  const staying = caller()
  const left = queue.acquire(leaving).catch((err: unknown) => err)
  const admitted = queue.acquire(staying)
  t.equal(queue.waiting, 2)
  leaving.destroyed = true
  leaving.emit('close')
  t.match(await left, { reason: 'gone', message: /caller left/ })
  t.equal(queue.waiting, 1, 'out of the line before its turn')
  t.equal(leaving.listenerCount('close'), 0)
  held()
  const release = await admitted
  t.equal(staying.listenerCount('close'), 0, 'an admitted caller is no longer watched')
  t.match(await queue.acquire(Object.assign(new EventEmitter(), { destroyed: true })).catch((err: unknown) => err), { reason: 'gone' })
  t.equal(queue.waiting, 0)
  release()
  t.equal(queue.running, 0)
})
