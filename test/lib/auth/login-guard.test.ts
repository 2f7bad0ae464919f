import t from 'tap'
import { LoginGuard } from '../../../lib/auth/login-guard.js'

function guard (now: { ms: number }, max = 3, maxPerAddress = 5): LoginGuard {
  return new LoginGuard({ max, maxPerAddress, windowMs: 60_000, now: () => now.ms })
}

t.test('a check takes its place before it runs: in-flight checks count', async (t) => {
  const now = { ms: 0 }
  const g = guard(now)
  const keys = LoginGuard.keys('10.0.0.1', 'u:ann')
  const tickets = [g.reserve(keys), g.reserve(keys), g.reserve(keys)]
  t.ok(tickets.every((r) => r.ok))
  const fourth = g.reserve(keys)
  t.same(fourth, { ok: false, retryAfterS: 1 }, 'three in flight: a fourth waits')
  for (const r of tickets) if (r.ok) r.ticket.succeed()
  t.ok(g.reserve(keys).ok, 'successes give their places back')
})

t.test('failures keep their place for the window; Retry-After says when the oldest leaves', async (t) => {
  const now = { ms: 0 }
  const g = guard(now)
  const keys = LoginGuard.keys('10.0.0.1', 'u:ann')
  for (let i = 0; i < 3; i++) {
    const r = g.reserve(keys)
    if (r.ok) r.ticket.fail()
    now.ms += 10_000
  }
  t.same(g.reserve(keys), { ok: false, retryAfterS: 30 })
  now.ms = 60_001
  const again = g.reserve(keys)
  t.ok(again.ok, 'the first failure left the window')
  if (again.ok) {
    again.ticket.fail()
    again.ticket.succeed()
  }
  t.notOk(g.reserve(keys).ok, 'a ticket settles once')
})

t.test('the address counts across subjects', async (t) => {
  const now = { ms: 0 }
  const g = guard(now, 3, 5)
  for (let i = 0; i < 5; i++) {
    const r = g.reserve(LoginGuard.keys('10.0.0.1', `u:user-${i}`))
    t.ok(r.ok)
    if (r.ok) r.ticket.fail()
  }
  t.notOk(g.reserve(LoginGuard.keys('10.0.0.1', 'u:someone-else')).ok)
  t.ok(g.reserve(LoginGuard.keys('10.0.0.2', 'u:someone-else')).ok)
  const cancelled = g.reserve(LoginGuard.keys('10.0.0.3', 'u:x'))
  if (cancelled.ok) cancelled.ticket.cancel()
  t.ok(g.reserve(LoginGuard.keys('10.0.0.3', 'u:x')).ok, 'a cancelled check counts nothing')
})

t.test('known good and known bad credentials', async (t) => {
  const now = { ms: 0 }
  const g = new LoginGuard({ max: 3, maxPerAddress: 5, windowMs: 60_000, knownGoodMs: 1000, now: () => now.ms })
  const right = g.fingerprint('u:ann', 'right')
  const wrong = g.fingerprint('u:ann', 'wrong')
  t.not(right, wrong)
  t.not(right, g.fingerprint('u:bob', 'right'), 'the subject is part of it')
  t.notOk(right.includes('right'))
  t.notOk(g.isKnownGood(right))
  g.rememberGood(right)
  t.ok(g.isKnownGood(right))
  now.ms = 1001
  t.notOk(g.isKnownGood(right), 'for a time only')
  g.rememberBad(wrong, 'hash-1')
  t.ok(g.isKnownBad(wrong, 'hash-1'))
  t.notOk(g.isKnownBad(wrong, 'hash-2'), 'only against the same stored hash')
  t.notOk(g.isKnownBad(wrong, 'hash-1'), 'and a mismatch forgets it')
  g.rememberBad(right, 'hash-1')
  g.rememberGood(right)
  t.notOk(g.isKnownBad(right, 'hash-1'), 'good replaces bad')
  now.ms += 60_001
  g.rememberBad(wrong, 'hash-1')
  now.ms += 60_001
  t.notOk(g.isKnownBad(wrong, 'hash-1'), 'bad lasts a window')
})

t.test('memory stays bounded', async (t) => {
  const now = { ms: 0 }
  const g = new LoginGuard({ max: 3, maxPerAddress: 5, windowMs: 60_000, maxEntries: 10, now: () => now.ms })
  for (let i = 0; i < 100; i++) {
    const r = g.reserve(LoginGuard.keys(`10.0.0.${i}`, 'u:ann'))
    if (r.ok) r.ticket.fail()
    g.rememberGood(g.fingerprint('u:ann', String(i)))
    g.rememberBad(g.fingerprint('u:bob', String(i)), 'h')
  }
  t.ok(g.isKnownGood(g.fingerprint('u:ann', '99')))
  t.notOk(g.isKnownGood(g.fingerprint('u:ann', '0')), 'the oldest went first')
  now.ms = 120_000
  for (let i = 0; i < 20; i++) g.reserve(LoginGuard.keys(`10.1.0.${i}`, 'u:ann'))
  t.pass('pruned without error')
})

t.test('an address over its count makes no new entry; a refused check keeps nothing', async (t) => {
  const now = { ms: 0 }
  const g = guard(now, 3, 5)
  for (let i = 0; i < 5; i++) {
    const r = g.reserve(LoginGuard.keys('10.0.0.1', `u:user-${i}`))
    if (r.ok) r.ticket.fail()
  }
  t.same(g.sizes(), { counters: 6, good: 0, bad: 0 }, 'the address and its five subjects')
  for (let i = 0; i < 1000; i++) t.notOk(g.reserve(LoginGuard.keys('10.0.0.1', `u:${'x'.repeat(10_000)}-${i}`)).ok)
  t.same(g.sizes(), { counters: 6, good: 0, bad: 0 }, 'nothing more')
})

t.test('entries are kept by digest, go when their time has passed, and a success keeps nothing', async (t) => {
  const now = { ms: 0 }
  const g = guard(now)
  const ok = g.reserve(LoginGuard.keys('10.0.0.1', 'u:ann'))
  if (ok.ok) ok.ticket.succeed()
  t.equal(g.sizes().counters, 0, 'a check that succeeded leaves no entry')
  for (let i = 0; i < 4; i++) {
    const r = g.reserve(LoginGuard.keys(`10.0.0.${i}`, 'u:ann'))
    if (r.ok) r.ticket.fail()
  }
  g.rememberBad(g.fingerprint('u:ann', 'wrong'), 'h')
  g.rememberGood(g.fingerprint('u:ann', 'right'))
  t.same(g.sizes(), { counters: 8, good: 1, bad: 1 })
  now.ms = 60_001
  const r = g.reserve(LoginGuard.keys('10.0.0.9', 'u:bob'))
  t.same(g.sizes(), { counters: 2, good: 1, bad: 0 }, 'failures and known-bad credentials past the window are gone')
  if (r.ok) r.ticket.cancel()
  t.equal(g.sizes().counters, 0)
  now.ms += 24 * 3600_000
  g.rememberBad(g.fingerprint('u:bob', 'wrong'), 'h')
  t.same(g.sizes(), { counters: 0, good: 0, bad: 1 }, 'known good for a day')
})

t.test('a full table drops the least recently active entry', async (t) => {
  const now = { ms: 0 }
  const g = new LoginGuard({ max: 3, maxPerAddress: 100, windowMs: 60_000, maxEntries: 10, now: () => now.ms })
  const fail = (address: string, subject: string): boolean => {
    const r = g.reserve(LoginGuard.keys(address, subject))
    if (r.ok) r.ticket.fail()
    return r.ok
  }
  for (let i = 0; i < 3; i++) fail('10.0.0.1', 'u:target')
  t.notOk(fail('10.0.0.1', 'u:target'), 'over its count')
  for (let i = 0; i < 7; i++) fail('10.0.0.1', `u:other-${i}`)
  t.equal(g.sizes().counters, 9)
  now.ms = 1
  for (let i = 0; i < 3; i++) fail('10.0.0.1', 'u:target')
  fail('10.0.0.2', 'u:new')
  t.equal(g.sizes().counters, 10, 'never past maxEntries')
  t.notOk(fail('10.0.0.1', 'u:target'), 'the entries active lately stay')
})
