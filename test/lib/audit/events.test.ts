import t from 'tap'
import fc from 'fast-check'
import { AUDIT_MAX_DETAILS, AUDIT_MAX_TEXT, RELAYED_QUERY_MAX_NAMES, outcomeOf, parseTimeRange, relayedPath, storableDetails, storableText } from '../../../lib/audit/events.js'
import { pathOf } from '../../../lib/http/public-url.js'
import { adapterChanges, userChanges } from '../../../lib/audit/changes.js'

// encodeURIComponent refuses a lone surrogate.
const wellFormed = (text: string): boolean => { try { encodeURIComponent(text); return true } catch { return false } }

t.test('texts are bounded and storable whatever they hold', async (t) => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 3000 }), (text) => {
    const stored = storableText(text)
    return stored.length <= AUDIT_MAX_TEXT && !stored.includes('\u0000') && wellFormed(stored)
  }))
  t.equal(storableText('a\u0000b'), 'a\uFFFDb')
  t.equal(storableText('x\uD800'), 'x\uFFFD', 'a lone surrogate')
  t.equal(storableText('😀'), '😀', 'a pair stays')
  const details = storableDetails(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i === 0 ? Infinity : 'v'])))
  t.equal(Object.keys(details ?? {}).length, AUDIT_MAX_DETAILS)
  t.equal(details?.k0, null, 'a number JSON cannot hold')
  t.equal(storableDetails(null), null)
})

t.test('outcomes and paths', async (t) => {
  t.equal(outcomeOf(200), 'success')
  t.equal(outcomeOf(409), 'failure')
  t.equal(pathOf('/users?token=x'), '/users')
  t.equal(pathOf('/users'), '/users')
})

t.test('the time range: ISO dates, a real day, from before to', async (t) => {
  t.same(parseTimeRange({}), { ok: true, value: {} })
  const range = parseTimeRange({ from: '2026-01-31', to: '2026-02-01T12:00:00.5+02:00' })
  t.ok(range.ok)
  if (range.ok) {
    t.equal(range.value.from?.toISOString(), '2026-01-31T00:00:00.000Z')
    t.equal(range.value.to?.toISOString(), '2026-02-01T10:00:00.500Z')
  }
  t.match(parseTimeRange({ from: '2026-02-31' }), { ok: false, reason: /^querystring\/from / })
  t.match(parseTimeRange({ to: '2026-01-31T12:00' }), { ok: false, reason: /^querystring\/to / }, 'a time without its offset is ambiguous')
  t.match(parseTimeRange({ to: 'yesterday' }), { ok: false, reason: /^querystring\/to / })
  t.match(parseTimeRange({ from: '2026-02-01', to: '2026-01-01' }), { ok: false, reason: /^querystring\/from must not be later/ })
})

t.test('what an update changed names a password, never copies it', async (t) => {
  t.same(userChanges({ password: 'secret-1', roles: ['admin'], groups: ['g'], disabled: true }),
    { fields: 'disabled,groups,password,roles', roles: 'admin', groups: 'g', disabled: true })
  t.same(userChanges({ email: null }), { fields: 'email' })
  t.same(adapterChanges({ password: 'secret-2', baseUrl: 'https://nso' }), { fields: 'baseUrl,password', baseUrl: 'https://nso' })
  t.same(adapterChanges({ username: 'u' }), { fields: 'username' })
})

t.test('a relayed path is kept without its query string: its parameter names at most', async (t) => {
  t.same(relayedPath('/restconf/data/tailf-ncs:devices'), { path: '/restconf/data/tailf-ncs:devices' })
  t.same(relayedPath('/restconf/data/x?token=secret&depth=2&token=again&flag'), { path: '/restconf/data/x', query: 'token,depth,flag' })
  t.same(relayedPath('/restconf/data/x?'), { path: '/restconf/data/x', query: '' })
  const many = relayedPath(`/x?${Array.from({ length: 100 }, (_, i) => `p${i}=v${i}`).join('&')}`)
  t.equal(many.query?.split(',').length, RELAYED_QUERY_MAX_NAMES, 'a bounded number of names')
  t.notMatch(JSON.stringify(many), /v\d/, 'never a value')
})
