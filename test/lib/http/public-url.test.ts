import t from 'tap'
import { publicBase, trustProxy } from '../../../lib/http/public-url.js'

t.test('TRUST_PROXY forms', async (t) => {
  t.equal(trustProxy(undefined)('127.0.0.1', 0), false)
  t.equal(trustProxy('false')('127.0.0.1', 0), false)
  t.equal(trustProxy('true')('203.0.113.9', 5), true)
  const oneHop = trustProxy('1')
  t.equal(oneHop('203.0.113.9', 0), true)
  t.equal(oneHop('203.0.113.9', 1), false)
  const list = trustProxy('10.0.0.0/8, loopback')
  t.equal(list('10.1.2.3', 0), true)
  t.equal(list('127.0.0.1', 0), true)
  t.equal(list('203.0.113.9', 0), false)
})

t.test('public base URL', async (t) => {
  const request = { protocol: 'https', host: 'automation.example.com' }
  t.equal(publicBase({ ...request, trusted: true, publicUrl: 'https://api.example.com/base/' }), 'https://api.example.com/base', 'PUBLIC_URL wins')
  t.equal(publicBase({ ...request, trusted: false, forwardedPrefix: '/netauto' }), '', 'untrusted: relative')
  t.equal(publicBase({ ...request, trusted: true }), 'https://automation.example.com')
  t.equal(publicBase({ ...request, trusted: true, forwardedPrefix: '/netauto/' }), 'https://automation.example.com/netauto')
  t.equal(publicBase({ ...request, trusted: true, forwardedPrefix: ['/a/b', '/c'] }), 'https://automation.example.com/a/b')
  for (const bad of ['netauto', '/../x', '//evil.example', '/a b', '/x?y', 'https://evil', '/a/./b', '/%2e%2e']) {
    t.equal(publicBase({ ...request, trusted: true, forwardedPrefix: bad }), 'https://automation.example.com', `prefix ${bad} ignored`)
  }
})
