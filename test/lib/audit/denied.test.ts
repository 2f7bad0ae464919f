// What a denied request's event may hold, and how many are recorded per address and window.
import t from 'tap'
import { DENIED_PATH_MAX, DENIED_TEXT_MAX, DeniedLimiter, boundedText, deniedTarget, possibleUsername } from '../../../lib/audit/denied.js'

t.test('an actor only when some user could have the name (the rule of user creation)', async (t) => {
  for (const name of ['ann', 'admin', 'a.b_c-d@example.com', 'x'.repeat(64)]) t.equal(possibleUsername(name), name, name)
  for (const name of ['admin ', ' admin', 'ad min', '', 'x'.repeat(65), 'ann:x', 'é', 'a\u0000', '<script>', undefined, null]) {
    t.equal(possibleUsername(name), null, JSON.stringify(name))
  }
})

t.test('the target: method and path, without the query, cut at a fixed length', async (t) => {
  t.equal(deniedTarget('GET', '/users?token=secret'), 'GET /users')
  t.equal(deniedTarget('POST', '/users'), 'POST /users')
  const long = deniedTarget('GET', `/studio/${'x'.repeat(5000)}?token=secret`)
  t.equal(long, `GET /studio/${'x'.repeat(DENIED_PATH_MAX - '/studio/'.length)}…`)
  t.ok(long.length <= DENIED_PATH_MAX + 'GET '.length + 1)
  t.equal(boundedText('y'.repeat(DENIED_TEXT_MAX)), 'y'.repeat(DENIED_TEXT_MAX), 'at the limit: kept whole')
  t.equal(boundedText('y'.repeat(5000)).length, DENIED_TEXT_MAX + 1, 'past it: cut, with an ellipsis')
})

t.test('per address, then in total; the rest counted, one count per address', async (t) => {
  const limiter = new DeniedLimiter({ perAddress: 3, total: 5, addresses: 100 })
  const admitted = (address: string, n: number): number => {
    let yes = 0
    for (let i = 0; i < n; i++) if (limiter.admit(address)) yes++
    return yes
  }
  t.equal(admitted('10.0.0.1', 1000), 3, 'three from one address')
  t.equal(admitted('10.0.0.2', 1), 1)
  t.equal(admitted('10.0.0.3', 10), 1, 'the total reached: one more')
  t.equal(admitted('10.0.0.4', 2), 0, 'none past the total')
  t.same(limiter.close(), [
    { address: '10.0.0.1', suppressed: 997, addresses: 1 },
    { address: '10.0.0.3', suppressed: 9, addresses: 1 },
    { address: '10.0.0.4', suppressed: 2, addresses: 1 }
  ])
  t.equal(admitted('10.0.0.1', 5), 3, 'a new window: recorded again')
  t.same(limiter.close(), [{ address: '10.0.0.1', suppressed: 2, addresses: 1 }])
  t.same(limiter.close(), [], 'nothing counted: no count')
})

t.test('many addresses: the counts stay bounded, the rest summed in one', async (t) => {
  const limiter = new DeniedLimiter({ perAddress: 1, total: 10, addresses: 50 })
  let admitted = 0
  for (let i = 0; i < 10_000; i++) if (limiter.admit(`2001:db8::${i.toString(16)}`)) admitted++
  t.equal(admitted, 10)
  const counts = limiter.close()
  t.equal(counts.length, 11, 'at most `total` counts, and one for the others')
  t.same(counts.at(-1), { address: null, suppressed: 10_000 - 10 - 10, addresses: 30 + 50 }, 'the others summed (their number as far as counted: 30 tracked, 50 past the tracked)')
  t.equal(counts.reduce((sum, c) => sum + c.suppressed, 0), 10_000 - admitted, 'every request not recorded is counted')
})
