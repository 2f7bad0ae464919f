import t from 'tap'
import { CheckQueue, QueueFull } from '../../../lib/auth/check-queue.js'

const deferred = () => {
  let resolve!: () => void
  const promise = new Promise<void>((_resolve) => { resolve = _resolve })
  return { promise, resolve }
}

t.test('a few at a time, a bounded line, priority first', async (t) => {
  const queue = new CheckQueue({ concurrency: 2, maxWaiting: 2 })
  const gate = deferred()
  const order: string[] = []
  const job = (name: string) => async () => { order.push(name); await gate.promise; return name }
  const a = queue.run(job('a'))
  const b = queue.run(job('b'))
  const c = queue.run(job('c'))
  const d = queue.run(job('d'))
  t.equal(queue.running, 2)
  t.equal(queue.waiting, 2)
  await t.rejects(queue.run(job('e')), QueueFull, 'the line is full')
  const p = queue.run(job('p'), { priority: true })
  t.equal(queue.waiting, 3, 'known credentials have a line of their own')
  gate.resolve()
  t.same(await Promise.all([a, b, c, d, p]), ['a', 'b', 'c', 'd', 'p'])
  t.same(order.slice(0, 3), ['a', 'b', 'p'], 'the priority waiter started first')
  t.equal(queue.running, 0)
  t.equal(queue.started, 5)
})

t.test('a failing check frees its slot', async (t) => {
  const queue = new CheckQueue({ concurrency: 1, maxWaiting: 0 })
  await t.rejects(queue.run(async () => { throw new Error('boom') }), /boom/)
  t.equal(await queue.run(async () => 42), 42)
  t.equal(queue.running, 0)
})
