// Over 300 lines: one table of accepted and refused values per relay parameter.
import t from 'tap'
import {
  checkActionParams,
  checkMediaType,
  checkQueryParams,
  checkRelayPath,
  isJsonBodyMediaType,
  isJsonMediaType,
  MAX_MEDIA_TYPE_LENGTH,
  MAX_RELAY_PATH_LENGTH,
  normaliseRelayMethod,
} from '../../../lib/orchestrator/relay-request.js'

// Test names go into TAP output line by line, so raw U+2028 and friends must not reach it.
const show = (v: unknown): string =>
  (JSON.stringify(v) ?? String(v)).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

t.test('checkRelayPath accepts orchestrator paths unchanged', async (t) => {
  const good = [
    '/restconf/data',
    '/restconf/data/tailf-ncs:devices',
    '/restconf/data/tailf-ncs:devices/device=ce0',
    '/restconf/data/tailf-ncs:devices/device=ce0?depth=2',
    '/restconf/data/tailf-ncs:devices/device=ce0/config?content=config&depth=unbounded',
    '/restconf/data/tailf-ncs:devices/device=ce%2F0',
    '/restconf/data/tailf-ncs:devices/device=ce0/config/tailf-ned-cisco-ios:interface/GigabitEthernet=0%2F1',
    '/restconf/data/tailf-ncs:devices/device=ce0/check-sync',
    '/restconf/operations/tailf-ncs:devices/check-sync',
    '/api/running/devices?deep',
    '/api/running/devices/device/ce0/_operations/check-sync',
    '/api/operational/devices/device/ce0/state',
    '/',
    '/a.b/c..d/...',
    '/x@y',
    '/http:/not-a-scheme-here',
    '/a?redirect=http://elsewhere/x/../y',
    '/' + 'a'.repeat(MAX_RELAY_PATH_LENGTH - 1),
  ]
  for (const path of good) {
    t.same(checkRelayPath(path), { ok: true, value: path }, show(path))
  }
})

t.test('checkRelayPath rejects attacks and malformed paths', async (t) => {
  // [input, substring expected in the reason]
  const bad: Array<[unknown, string]> = [
    // not a path on the adapter's host
    ['http://evil/x', 'scheme'],
    ['https://evil/x', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['javascript:x', 'scheme'],
    ['//evil/x', "authority ('//')"],
    ['///evil/x', "authority ('//')"],
    ['/%2fevil/x', "authority ('//')"],
    ['/%2F%2Fevil', "authority ('//')"],
    ['@evil/x', "must start with '/'"],
    ['evil/x', "must start with '/'"],
    ['restconf/data', "must start with '/'"],
    ['?x=1', "must start with '/'"],
    ['/\\evil', 'backslash'],
    ['\\\\evil', 'backslash'],
    ['/a\\..\\b', 'backslash'],
    ['/a/%5c../b', 'encoded backslash'],
    ['/a/%5C%5Cevil', 'encoded backslash'],
    // traversal, plain and encoded
    ['/a/../../etc', "'..' segments"],
    ['/..', "'..' segments"],
    ['/a/..', "'..' segments"],
    ['/a/./b', "'..' segments"],
    ['/a/..;x=1/b', "'..' segments"],
    ['/a/%2e%2e/b', "'..' segments"],
    ['/%2E%2E/x', "'..' segments"],
    ['/%2E./x', "'..' segments"],
    ['/.%2e/x', "'..' segments"],
    ['/a%2f..%2fb', "'..' segments"],
    ['/a%2F%2e%2e%2Fb', "'..' segments"],
    ['/a/%252e%252e/b', "'..' segments"],
    ['/a/%25252e%25252e/b', "'..' segments"],
    // fragment
    ['/x#frag', 'fragment'],
    ['/x?y=1#frag', 'fragment'],
    // control characters, header injection, whitespace
    ['/x\r\nHost: evil', 'control characters'],
    ['/x\nX-Injected: 1', 'control characters'],
    ['/x\r', 'control characters'],
    ['/x\u0000y', 'control characters'],
    ['/x\ty', 'control characters'],
    ['/x\u007fy', 'control characters'],
    ['/x%0d%0aHost:%20evil', 'encoded control characters'],
    ['/x%00', 'encoded control characters'],
    ['/x?q=%0A', 'encoded control characters'],
    ['/x%250d%250a', 'encoded control characters'],
    ['/x y', 'spaces'],
    ['/x?q= 1', 'spaces'],
    ['/x\u2028y', 'ASCII'],
    ['/x\u2029y', 'ASCII'],
    ['/x\u0085y', 'ASCII'],
    ['/dévice', 'ASCII'],
    // broken percent-encoding
    ['/x%zz', 'percent-encoding'],
    ['/x%2', 'percent-encoding'],
    ['/x%', 'percent-encoding'],
    // shape and size
    ['', 'must not be empty'],
    ['/' + 'a'.repeat(MAX_RELAY_PATH_LENGTH), `at most ${MAX_RELAY_PATH_LENGTH}`],
    [undefined, 'must be a string'],
    [42, 'must be a string'],
    [['/x'], 'must be a string'],
  ]
  for (const [path, expected] of bad) {
    const result = checkRelayPath(path)
    t.equal(result.ok, false, `rejects ${show(path)}`)
    if (!result.ok) {
      t.ok(result.reason.startsWith('params.path '), `reason names the field: ${result.reason}`)
      t.ok(result.reason.includes(expected), `${show(path)}: "${result.reason}" mentions "${expected}"`)
    }
  }
})

t.test('checkRelayPath finds a dot segment wherever it is, with or without escapes', async (t) => {
  // The definition: a segment of the path (before any '?') that is '.' or '..' once its
  // ';parameters' are left off. Every path of up to six characters from '.', ';', '/' and 'a'
  // after the leading '/', plain and with its dots percent-encoded, is judged as it says.
  const isDotSegmentPath = (path: string): boolean => (path.split('?')[0] ?? '').split('/')
    .some((segment) => ['.', '..'].includes(segment.split(';')[0] ?? ''))
  const alphabet = ['.', ';', '/', 'a']
  let paths = ['']
  let judged = 0
  for (let length = 0; length <= 6; length++) {
    for (const tail of paths) {
      const path = '/' + tail
      // '//' is refused before any segment is looked at.
      if (path.includes('//')) continue
      const expected = isDotSegmentPath(path)
      for (const form of [path, path.replaceAll('.', '%2e')]) {
        const result = checkRelayPath(form)
        if (expected !== (!result.ok && result.reason.includes("'..' segments"))) t.fail(`${form}: ${JSON.stringify(result)}`)
        judged++
      }
    }
    paths = paths.flatMap((tail) => alphabet.map((c) => tail + c))
  }
  t.ok(judged > 2000, `${judged} paths judged`)
  t.same(checkRelayPath('/a/..?x=/../'), { ok: false, reason: "params.path must not contain '.' or '..' segments" })
  t.same(checkRelayPath('/a/b?x=/../'), { ok: true, value: '/a/b?x=/../' })
})

t.test('checkRelayPath names the given field', async (t) => {
  t.same(checkRelayPath('x', 'path'), { ok: false, reason: "path must start with '/'" })
})

t.test('checkMediaType accepts media types the orchestrator uses', async (t) => {
  const good = [
    'application/vnd.yang.data+json',
    'application/vnd.yang.data+xml',
    'application/vnd.yang.collection+json',
    'application/vnd.yang.collection+xml',
    'application/yang-data+json',
    'application/yang-data+xml',
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=utf-8',
    'application/json ; charset="utf-8"',
    'text/plain; charset=us-ascii; format=flowed',
    'multipart/form-data; boundary="a \\"b\\" c"',
    '*/*',
    'application/*',
  ]
  for (const value of good) {
    t.same(checkMediaType(value, 'params.accept'), { ok: true, value }, value)
  }
})

t.test('checkMediaType rejects header injection and malformed types', async (t) => {
  const bad: Array<[unknown, string]> = [
    ['application/json\r\nX-Injected: 1', 'control characters'],
    ['application/json\nX-Injected: 1', 'control characters'],
    ['application/json\r', 'control characters'],
    ['application/json\u0000', 'control characters'],
    ['application/json;\tcharset=utf-8', 'control characters'],
    ['application/jsön', 'ASCII'],
    ['application/json\u2028', 'ASCII'],
    ['text', 'media type'],
    ['*/', 'media type'],
    ['/json', 'media type'],
    ['application/', 'media type'],
    ['application/json;', 'media type'],
    ['application/json; charset', 'media type'],
    ['application/json; charset=', 'media type'],
    ['application/json; =utf-8', 'media type'],
    ['application/json; charset="unterminated', 'media type'],
    ['application/json, text/plain', 'media type'],
    ['application/json ', 'media type'],
    [' application/json', 'media type'],
    ['application /json', 'media type'],
    ['application/json/x', 'media type'],
    ['application/(json)', 'media type'],
    ['', 'must not be empty'],
    ['application/' + 'x'.repeat(MAX_MEDIA_TYPE_LENGTH), `at most ${MAX_MEDIA_TYPE_LENGTH}`],
    [undefined, 'must be a string'],
    [7, 'must be a string'],
  ]
  for (const [value, expected] of bad) {
    const result = checkMediaType(value, 'params.contentType')
    t.equal(result.ok, false, `rejects ${show(value)}`)
    if (!result.ok) {
      t.ok(result.reason.startsWith('params.contentType '), `reason names the field: ${result.reason}`)
      t.ok(result.reason.includes(expected), `${show(value)}: "${result.reason}" mentions "${expected}"`)
    }
  }
})

t.test('normaliseRelayMethod', async (t) => {
  const good: Array<[unknown, string]> = [
    [undefined, 'POST'],
    [null, 'POST'],
    ['GET', 'GET'],
    ['get', 'GET'],
    ['Post', 'POST'],
    ['put', 'PUT'],
    ['pAtCh', 'PATCH'],
    ['delete', 'DELETE'],
  ]
  for (const [input, expected] of good) {
    t.same(normaliseRelayMethod(input), { ok: true, value: expected }, `${String(input)} -> ${expected}`)
  }
  const bad: unknown[] = ['', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'GET ', 'GET\r\n', 'G3T', 5, {}]
  for (const input of bad) {
    const result = normaliseRelayMethod(input)
    t.equal(result.ok, false, `rejects ${show(input)}`)
    if (!result.ok) t.ok(result.reason.startsWith('params.method must'), result.reason)
  }
  t.same(normaliseRelayMethod('HEAD'), {
    ok: false,
    reason: 'params.method must be one of GET, POST, PUT, PATCH, DELETE',
  })
})

t.test('isJsonMediaType', async (t) => {
  const table: Array<[string | undefined, boolean]> = [
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['Application/JSON', true],
    ['application/yang-data+json', true],
    ['application/vnd.yang.data+json', true],
    ['application/vnd.yang.collection+json', true],
    ['application/problem+json; charset=utf-8', true],
    ['application/yang-data+xml', false],
    ['application/vnd.yang.collection+xml', false],
    ['application/xml', false],
    ['text/xml', false],
    ['text/plain', false],
    ['text/html; charset=utf-8', false],
    ['application/jsonp', false],
    ['application/json-seq', false],
    ['application/+json', false],
    ['json', false],
    ['', false],
    [undefined, false],
  ]
  for (const [header, expected] of table) {
    t.equal(isJsonMediaType(header), expected, `${String(header)} -> ${expected}`)
  }
})

t.test('checkActionParams', async (t) => {
  t.same(
    checkActionParams({ path: '/api/running/devices?deep', accept: 'application/vnd.yang.data+json' }),
    {
      ok: true,
      value: {
        path: '/api/running/devices?deep',
        accept: 'application/vnd.yang.data+json',
        method: 'POST',
        contentType: 'application/vnd.yang.data+json',
      },
    },
    'method defaults to POST, contentType to accept'
  )
  t.same(
    checkActionParams({
      path: '/restconf/data/tailf-ncs:devices',
      accept: 'application/yang-data+json',
      method: 'put',
      contentType: 'application/yang-data+json; charset=utf-8',
    }),
    {
      ok: true,
      value: {
        path: '/restconf/data/tailf-ncs:devices',
        accept: 'application/yang-data+json',
        method: 'PUT',
        contentType: 'application/yang-data+json; charset=utf-8',
      },
    }
  )
  const bad: Array<[Parameters<typeof checkActionParams>[0], string]> = [
    [{ path: '//evil/x', accept: 'application/json' }, 'params.path '],
    [{ path: '/x', accept: 'application/json\r\nX: 1' }, 'params.accept '],
    [{ path: '/x', accept: 'application/json', method: 'TRACE' }, 'params.method '],
    [{ path: '/x', accept: 'application/json', contentType: 'text' }, 'params.contentType '],
    [{ path: '/x', accept: undefined }, 'params.accept '],
  ]
  for (const [params, field] of bad) {
    const result = checkActionParams(params)
    t.equal(result.ok, false, show(params))
    if (!result.ok) t.ok(result.reason.startsWith(field), result.reason)
  }
})

t.test('checkQueryParams', async (t) => {
  t.same(checkQueryParams({ path: '/restconf/data/tailf-ncs:devices?depth=2', accept: 'application/yang-data+json' }), {
    ok: true,
    value: { path: '/restconf/data/tailf-ncs:devices?depth=2', accept: 'application/yang-data+json' },
  })
  const badPath = checkQueryParams({ path: '/a/%2e%2e/b', accept: 'application/yang-data+json' })
  t.equal(badPath.ok, false)
  if (!badPath.ok) t.match(badPath.reason, /^params\.path /)
  const badAccept = checkQueryParams({ path: '/x', accept: '' })
  t.equal(badAccept.ok, false)
  if (!badAccept.ok) t.match(badAccept.reason, /^params\.accept /)
})

t.test('an action body goes up with a JSON Content-Type only; GET and DELETE send none', async (t) => {
  for (const type of ['application/json', 'application/yang-data+json', 'application/vnd.yang.data+json; charset=utf-8', 'Application/JSON']) {
    t.equal(isJsonBodyMediaType(type), true, type)
  }
  for (const type of ['*/*', 'application/*', 'text/json', 'application/yang-data+xml', 'text/plain', 'application/jsonx', 'application/+json']) {
    t.equal(isJsonBodyMediaType(type), false, type)
  }
  const defaulted = checkActionParams({ path: '/x', accept: '*/*' })
  t.equal(defaulted.ok, false, 'accept */* would become the Content-Type')
  if (!defaulted.ok) t.match(defaulted.reason, /^params\.contentType is needed: it defaults to params\.accept/)
  const xml = checkActionParams({ path: '/x', accept: 'application/yang-data+json', contentType: 'application/yang-data+xml' })
  t.equal(xml.ok, false)
  if (!xml.ok) t.match(xml.reason, /^params\.contentType must be a JSON media type/)
  const explicit = checkActionParams({ path: '/x', accept: '*/*', contentType: 'application/yang-data+json' })
  t.same(explicit.ok ? explicit.value.contentType : undefined, 'application/yang-data+json', 'any accept with a JSON contentType')
  for (const method of ['GET', 'delete']) {
    const bodyless = checkActionParams({ path: '/x', accept: '*/*', method })
    t.equal(bodyless.ok, true, `${method}: no body, no Content-Type to check`)
    t.equal(bodyless.ok ? bodyless.value.contentType : 'x', undefined, `${method}: none sent`)
  }
})

t.test('answersAccept: same type, wildcard, same family; nothing else', async (t) => {
  const { answersAccept } = await import('../../../lib/orchestrator/relay-request.js')
  t.ok(answersAccept('application/yang-data+json', 'application/yang-data+json; charset=utf-8'))
  t.ok(answersAccept('application/json', 'application/yang-data+json'))
  t.ok(answersAccept('*/*', 'text/html'))
  t.ok(answersAccept('application/*', 'application/xml'))
  t.ok(answersAccept('application/yang-data+xml', 'text/xml'))
  t.ok(answersAccept('application/xml', 'application/vnd.yang.collection+xml'))
  t.notOk(answersAccept('application/*', 'text/html'))
  t.notOk(answersAccept('application/yang-data+json', 'text/html'))
  t.notOk(answersAccept('application/yang-data+xml', 'application/json'))
  t.notOk(answersAccept('text/plain', 'text/html'))
  t.notOk(answersAccept('application/json', undefined))
})
