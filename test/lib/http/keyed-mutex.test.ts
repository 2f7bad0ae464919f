import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { KeyedMutex } from '../../../lib/http/keyed-mutex.js'

t.test('runs one at a time per key, in arrival order, even when one fails', async (t) => {
  const mutex = new KeyedMutex()
  const events: string[] = []
  const job = (name: string, ms: number, fail = false) => async () => {
    events.push(`start ${name}`)
    await sleep(ms)
    events.push(`end ${name}`)
    if (fail) throw new Error(name)
    return name
  }
  const results = await Promise.allSettled([
    mutex.run('a', job('1', 30)),
    mutex.run('a', job('2', 5, true)),
    mutex.run('a', job('3', 1))
  ])
  t.same(events, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3'])
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled'])
})

t.test('different keys do not wait for each other', async (t) => {
  const mutex = new KeyedMutex()
  const events: string[] = []
  await Promise.all([
    mutex.run('a', async () => { events.push('a start'); await sleep(30); events.push('a end') }),
    mutex.run('b', async () => { events.push('b start'); await sleep(1); events.push('b end') })
  ])
  t.same(events, ['a start', 'b start', 'b end', 'a end'])
})
