import t from 'tap'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { KeyedMutex } from '../../../lib/http/keyed-mutex.js'

/** A promise and the function that resolves it. */
function gate (): { opened: Promise<void>, open: () => void } {
  let open = (): void => {}
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { opened, open }
}

const turns = async (n: number): Promise<void> => { for (let i = 0; i < n; i++) await nextTurn() }

t.test('runs one at a time per key, in arrival order, even when one fails', async (t) => {
  const mutex = new KeyedMutex()
  const events: string[] = []
  const job = (name: string, wait: Promise<void>, fail = false) => async () => {
    events.push(`start ${name}`)
    await wait
    events.push(`end ${name}`)
    if (fail) throw new Error(name)
    return name
  }
  const first = gate()
  const settled = Promise.allSettled([
    mutex.run('a', job('1', first.opened)),
    mutex.run('a', job('2', Promise.resolve(), true)),
    mutex.run('a', job('3', Promise.resolve()))
  ])
  await turns(10)
  t.same(events, ['start 1'], 'the others wait while the first runs')
  first.open()
  const results = await settled
  t.same(events, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3'])
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled'])
})

t.test('different keys do not wait for each other', async (t) => {
  t.setTimeout(30_000) // were b to wait for a, a would wait for ever
  const mutex = new KeyedMutex()
  const events: string[] = []
  const bEnded = gate()
  await Promise.all([
    mutex.run('a', async () => { events.push('a start'); await bEnded.opened; events.push('a end') }),
    mutex.run('b', async () => { events.push('b start'); await nextTurn(); events.push('b end'); bEnded.open() })
  ])
  t.same(events, ['a start', 'b start', 'b end', 'a end'])
})
