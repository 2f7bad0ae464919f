import t from 'tap'
import { CountsBusy, SharedFailureCounts, type KeyChange, type KeyCount } from '../../../lib/auth/shared-failure-counts.js'
import { countKey } from '../../../lib/auth/login-guard.js'
import { until } from '../../helpers/until.js'

/** A count store in memory, as the database keeps it, recording every statement. */
function store (windowS = 60) {
  const counts = new Map<string, number>()
  const calls: Array<{ reserve: KeyChange[], giveBack: KeyChange[] }> = []
  let finished = 0
  let failNext: Error | undefined
  let omit: string | undefined
  const apply = async (reserve: KeyChange[], giveBack: KeyChange[]): Promise<KeyCount[]> => {
    calls.push({ reserve, giveBack })
    await new Promise((resolve) => setImmediate(resolve))
    finished++
    if (failNext !== undefined) { const err = failNext; failNext = undefined; throw err }
    for (const { key, n } of giveBack) counts.set(key, Math.max(0, (counts.get(key) ?? 0) - n))
    for (const { key, n } of reserve) counts.set(key, (counts.get(key) ?? 0) + n)
    return reserve.filter(({ key }) => key !== omit).map(({ key }) => ({ key, failures: counts.get(key) ?? 0, secondsLeft: windowS }))
  }
  /** Resolves once `n` statements have been answered. */
  const answered = async (n: number): Promise<void> => { await until(() => finished >= n, `${n} statements are answered`) }
  return { counts, calls, apply, answered, fail: (err: Error) => { failNext = err }, omit: (key: string) => { omit = key } }
}

t.test('keys are 16-byte HMAC digests of the parts, apart per kind and key', async (t) => {
  const key = Buffer.alloc(32, 1)
  t.match(countKey(key, 's', '10.0.0.1', 'u:alice'), /^[\w-]{22}$/)
  t.not(countKey(key, 's', '10.0.0.1', 'u:alice'), countKey(key, 'a', '10.0.0.1', 'u:alice'))
  t.not(countKey(key, 'a', '10.0.0.1'), countKey(Buffer.alloc(32, 2), 'a', '10.0.0.1'))
  t.equal(countKey(key, 'a', '10.0.0.1'), countKey(Buffer.alloc(32, 1), 'a', '10.0.0.1'), 'the same key makes the same digest')
})

t.test('concurrent reservations go in one statement; those past max are refused and their places given back', async (t) => {
  const s = store()
  const counts = new SharedFailureCounts({ apply: s.apply, maxPendingKeys: 100, maxBlocked: 100 })
  const results = await Promise.all(Array.from({ length: 10 }, async () => await counts.reserve([{ key: 'a', max: 4 }, { key: 's', max: 100 }])))
  t.equal(results.filter((r) => r.ok).length, 4)
  t.same(s.calls[0]?.reserve, [{ key: 'a', n: 10 }, { key: 's', n: 10 }], 'one statement for ten checks')
  const refused = results.find((r) => !r.ok)
  t.same(refused, { ok: false, retryAfterS: 60 })
  await s.answered(2)
  t.same(Object.fromEntries(s.counts), { a: 4, s: 4 }, 'the refused gave their places back, in both keys')
  t.equal(counts.statements, 2)

  // Found full: refused without a statement until the window ends.
  t.same(await counts.reserve([{ key: 'a', max: 4 }]), { ok: false, retryAfterS: 60 })
  t.equal(counts.statements, 2)

  // A success gives back its place: once, however often released.
  const fresh = await counts.reserve([{ key: 'b', max: 1 }])
  if (!fresh.ok) throw new Error('refused')
  fresh.release()
  fresh.release()
  await s.answered(4)
  t.equal(s.counts.get('b'), 0)
  t.same(s.calls.at(-1)?.giveBack, [{ key: 'b', n: 1 }])
})

t.test('a block ends with its window', async (t) => {
  let now = 0
  const s = store(2)
  const counts = new SharedFailureCounts({ apply: s.apply, maxPendingKeys: 100, maxBlocked: 1, now: () => now })
  t.ok((await counts.reserve([{ key: 'x', max: 1 }])).ok)
  t.same(await counts.reserve([{ key: 'x', max: 1 }]), { ok: false, retryAfterS: 2 })
  // The refused place is given back by a statement of its own.
  await s.answered(3)
  const statements = counts.statements
  t.same(await counts.reserve([{ key: 'x', max: 1 }]), { ok: false, retryAfterS: 2 }, 'blocked here')
  t.equal(counts.statements, statements)
  now = 2500
  s.counts.set('x', 0)
  t.ok((await counts.reserve([{ key: 'x', max: 1 }])).ok, 'asked again once the window ended')
  // The table of blocks holds maxBlocked entries: a newer block pushes the older out.
  t.notOk((await counts.reserve([{ key: 'x', max: 1 }])).ok)
  t.ok((await counts.reserve([{ key: 'y', max: 1 }])).ok)
  t.notOk((await counts.reserve([{ key: 'y', max: 1 }])).ok)
  const before = counts.statements
  t.notOk((await counts.reserve([{ key: 'x', max: 1 }])).ok)
  t.ok(counts.statements > before, 'x was no longer remembered as full')
})

t.test('bounded: too many keys waiting is CountsBusy; give-backs past the bound are dropped; a failed statement fails its checks', async (t) => {
  const s = store()
  const counts = new SharedFailureCounts({ apply: s.apply, maxPendingKeys: 2, maxBlocked: 10 })
  const first = counts.reserve([{ key: 'a', max: 10 }, { key: 'b', max: 10 }])
  // The first statement starts on the next microtask; these wait for the one after it.
  await Promise.resolve()
  const second = counts.reserve([{ key: 'c', max: 10 }, { key: 'd', max: 10 }])
  await t.rejects(counts.reserve([{ key: 'e', max: 10 }]), CountsBusy)
  const [one, two] = await Promise.all([first, second])
  if (!one.ok || !two.ok) throw new Error('refused')
  const third = await counts.reserve([{ key: 'e', max: 10 }])
  if (!third.ok) throw new Error('refused')
  one.release()
  two.release()
  third.release()
  t.equal(counts.droppedGiveBacks, 3, 'three keys past the bound of two')

  await s.answered(4) // the three reservations and the places given back
  s.fail(new Error('connection refused'))
  await t.rejects(counts.reserve([{ key: 'f', max: 10 }]), /connection refused/)
  s.omit('g')
  await t.rejects(counts.reserve([{ key: 'g', max: 10 }]), /no count came back/)
})
