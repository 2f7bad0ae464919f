import t from 'tap'
import fc from 'fast-check'
import Fastify from 'fastify'
import basicAuth from '@fastify/basic-auth'
import { basicAuthorization, parseBasicAuthorization } from '../../../lib/auth/basic-auth-header.js'
import { propertyRuns } from '../../helpers/property-runs.js'

t.test('builds the header it parses', async (t) => {
  t.equal(basicAuthorization('ann', 'pässword'), 'Basic ' + Buffer.from('ann:pässword', 'utf8').toString('base64'))
  t.same(parseBasicAuthorization(basicAuthorization('ann', 'pässword')), { username: 'ann', password: 'pässword' })
})

t.test('credentials of a Basic header: the password keeps its colons', async (t) => {
  const b64 = (s: string): string => Buffer.from(s).toString('base64')
  t.same(parseBasicAuthorization(basicAuthorization('ann', 'se:cr:et')), { username: 'ann', password: 'se:cr:et' })
  t.same(parseBasicAuthorization(basicAuthorization('ann', '')), { username: 'ann', password: '' })
  t.same(parseBasicAuthorization(`basic \t ${b64('bob:x')} `), { username: 'bob', password: 'x' }, 'blanks around')
  t.equal(parseBasicAuthorization('Basic ' + b64('no-colon')), undefined)
  t.equal(parseBasicAuthorization('Basic ' + b64('ann:\u0000x')), undefined, 'control characters')
  t.equal(parseBasicAuthorization('Basic ' + b64('ann:x\ny')), undefined, 'a line break')
  t.equal(parseBasicAuthorization('Basic !!'), undefined)
  t.equal(parseBasicAuthorization('Basic'), undefined)
  t.equal(parseBasicAuthorization('Bearer abc'), undefined)
  t.equal(parseBasicAuthorization(undefined), undefined)
})

// Requests are authenticated by @fastify/basic-auth; the background re-check of a remembered
// credential and the token endpoint read headers with parseBasicAuthorization. Both must agree on
// every header: what the plugin accepted can be re-checked, what it refused is refused there too.
t.test('reads every header as @fastify/basic-auth does', async (t) => {
  const app = Fastify()
  let seen: { username: string, password: string } | undefined
  await app.register(basicAuth, {
    strictCredentials: false,
    validate: async (username, password) => { seen = { username, password } }
  })
  app.get('/', { onRequest: app.basicAuth }, async () => 'ok')
  await app.ready()
  t.teardown(async () => { await app.close() })

  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64')
  const credentials = fc.oneof(
    fc.tuple(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 12 })).map(([u, p]) => `${u}:${p}`),
    fc.string({ unit: 'binary', maxLength: 24 }),
    fc.constantFrom('ann:x\u0000', 'no-colon', ':', '::', 'ann:x\ty', 'ann:\u007f', '\u00ff:\u0100')
  )
  const token = fc.oneof(
    credentials.map(b64),
    credentials.map((c) => Buffer.from(c, 'utf8').toString('base64url')),
    fc.string({ unit: fc.constantFrom(...'AZaz09+/-_.~=!:'.split('')), maxLength: 30 })
  )
  const scheme = fc.constantFrom('Basic ', 'basic ', 'BASIC\t', ' Basic  ', 'Basic', 'Bearer ', 'Basicx ', '')
  const tail = fc.constantFrom('', ' ', '\t', ' x')
  // Well-formed credentials as clients send them, often: printable, with a colon, any script.
  const wellFormed = fc.tuple(
    fc.constantFrom('Basic ', 'basic ', 'BASIC\t', ' Basic  '),
    fc.string({ unit: fc.constantFrom(...'anp0_.@-é中'.split('')), maxLength: 10 }),
    fc.string({ unit: 'grapheme-ascii', maxLength: 16 }).filter((p) => !/[\x00-\x1F\x7F]/.test(p))
  ).map(([s, u, p]) => `${s}${b64(`${u}:${p}`)}`)
  const header = fc.oneof(
    { arbitrary: wellFormed, weight: 3 },
    { arbitrary: fc.tuple(scheme, token, tail).map(([s, tk, e]) => `${s}${tk}${e}`), weight: 3 },
    fc.string({ unit: fc.constantFrom(...' \tBasic=+/:abc019'.split('')), maxLength: 40 })
  )
  let accepted = 0
  const runs = propertyRuns(80)
  await fc.assert(fc.asyncProperty(header, async (authorization) => {
    seen = undefined
    const response = await app.inject({ url: '/', headers: { authorization } })
    const parsed = parseBasicAuthorization(authorization)
    if (response.statusCode === 200) accepted++
    t.equal(response.statusCode, seen === undefined ? 401 : 200)
    return JSON.stringify(parsed) === JSON.stringify(seen)
  }), { numRuns: runs })
  t.ok(accepted > runs / 4, `the plugin accepted ${accepted} of ${runs} headers: the property compared credentials, not only refusals`)
})
