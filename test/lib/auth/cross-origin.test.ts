import t from 'tap'
import { crossOriginRefusal, originOf } from '../../../lib/auth/cross-origin.js'

const own = ['http://127.0.0.1:3000', 'https://netauto.example.net']

t.test('reads pass whatever their origin', async (t) => {
  for (const method of ['GET', 'HEAD', 'OPTIONS']) {
    t.equal(crossOriginRefusal(method, { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' }, own), undefined, method)
  }
})

t.test('a GET that changes state is checked as a write', async (t) => {
  t.equal(crossOriginRefusal('GET', { 'sec-fetch-site': 'same-site' }, own, true), 'Sec-Fetch-Site: same-site', 'an image on another port')
  t.equal(crossOriginRefusal('GET', { 'sec-fetch-site': 'cross-site' }, own, true), 'Sec-Fetch-Site: cross-site')
  t.equal(crossOriginRefusal('GET', { 'sec-fetch-site': 'same-origin' }, own, true), undefined)
  t.equal(crossOriginRefusal('GET', { 'sec-fetch-site': 'none' }, own, true), undefined, 'typed in the address bar')
  t.equal(crossOriginRefusal('GET', { origin: 'http://127.0.0.1:4000' }, own, true), 'Origin: http://127.0.0.1:4000')
  t.equal(crossOriginRefusal('GET', {}, own, true), undefined, 'no browser')
})

t.test('a write: Sec-Fetch-Site decides when the browser sends it', async (t) => {
  t.equal(crossOriginRefusal('POST', { 'sec-fetch-site': 'same-origin' }, own), undefined)
  t.equal(crossOriginRefusal('PUT', { 'sec-fetch-site': 'none' }, own), undefined, 'the user\'s own navigation')
  t.equal(crossOriginRefusal('POST', { 'sec-fetch-site': 'same-site' }, own), 'Sec-Fetch-Site: same-site', 'another port or a sibling subdomain')
  t.equal(crossOriginRefusal('DELETE', { 'sec-fetch-site': 'cross-site' }, own), 'Sec-Fetch-Site: cross-site')
  t.equal(crossOriginRefusal('POST', { 'sec-fetch-site': 'same-origin', origin: 'http://evil.example' }, own), undefined,
    'the browser\'s own verdict, not a comparison with a Host a proxy may have rewritten')
  t.equal(crossOriginRefusal('POST', { 'sec-fetch-site': ['cross-site', 'same-origin'] }, own), 'Sec-Fetch-Site: cross-site', 'the first of repeated headers')
})

t.test('a write without Sec-Fetch-Site: its Origin must be one of ours', async (t) => {
  t.equal(crossOriginRefusal('POST', { origin: 'http://127.0.0.1:3000' }, own), undefined)
  t.equal(crossOriginRefusal('POST', { origin: 'HTTPS://netauto.example.net' }, own), undefined, 'case does not matter')
  t.equal(crossOriginRefusal('POST', { origin: 'http://127.0.0.1:4000' }, own), 'Origin: http://127.0.0.1:4000', 'another port')
  t.equal(crossOriginRefusal('PATCH', { origin: 'null' }, own), 'Origin: null', 'a sandboxed or file: page')
})

t.test('a write with neither header comes from no browser and passes', async (t) => {
  t.equal(crossOriginRefusal('POST', {}, own), undefined)
})

t.test('origins of URLs', async (t) => {
  t.equal(originOf('https://Netauto.example.net/base/'), 'https://netauto.example.net')
  t.equal(originOf('http://127.0.0.1:8080/x'), 'http://127.0.0.1:8080')
  t.equal(originOf('/studio/'), undefined, 'relative: no origin')
})
