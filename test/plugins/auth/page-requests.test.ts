// The cookie and the studio page: a write whose credentials came from the session cookie is
// refused from any other origin; the page's own calls get a 401 without a Basic challenge.
import t from 'tap'
import { adminAuth, buildTestApp, ADMIN } from '../../helper.js'

t.test('the session cookie, the origin of writes and the challenge', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  const login = await app.inject({ method: 'POST', url: '/login', payload: { user: ADMIN } })
  t.equal(login.statusCode, 200)
  const cookie = `token=${login.json() as string}`
  const create = await app.inject({
    method: 'POST',
    url: '/studio/component-groups',
    headers: { authorization: adminAuth },
    payload: { componentGroup: { name: 'Origin test', gbacRead: [], members: [] } }
  })
  const id = create.json().created._id as string
  const version = async (): Promise<number> =>
    (await app.inject({ url: `/studio/component-groups/${id}`, headers: { authorization: adminAuth } })).json().version

  t.test('a cookie write from another origin is refused, and changes nothing', async (t) => {
    for (const headers of [{ 'sec-fetch-site': 'same-site' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'http://127.0.0.1:1' }]) {
      const response = await app.inject({
        method: 'POST', url: `/studio/component-groups/${id}/versions/1/restore`, headers: { cookie, ...headers }
      })
      t.equal(response.statusCode, 403, JSON.stringify(headers))
      t.equal(response.json().code, 'CROSS_ORIGIN_WRITE_REFUSED')
    }
    // Git's bodiless writes and a logout are refused the same way: the check is the API's, not a route's.
    const logout = await app.inject({ method: 'POST', url: '/logout', headers: { cookie, 'sec-fetch-site': 'cross-site' } })
    t.equal(logout.statusCode, 403)
    // GET /logout ends the session too: an image or a link on another port of the host may not.
    for (const headers of [{ 'sec-fetch-site': 'same-site' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'http://127.0.0.1:1' }]) {
      const viaGet = await app.inject({ method: 'GET', url: '/logout', headers: { cookie, ...headers } })
      t.equal(viaGet.statusCode, 403, `GET /logout, ${JSON.stringify(headers)}`)
      t.equal(viaGet.json().code, 'CROSS_ORIGIN_WRITE_REFUSED')
      t.notOk(String(viaGet.headers['set-cookie'] ?? '').includes('token='), 'the cookie is not cleared')
    }
    t.equal((await app.inject({ url: '/whoami', headers: { cookie } })).statusCode, 200, 'the session still works')
    t.equal(await version(), 1, 'nothing restored')
  })

  t.test('reads with the cookie pass from anywhere; writes from the same origin pass', async (t) => {
    const read = await app.inject({ url: `/studio/component-groups/${id}`, headers: { cookie, 'sec-fetch-site': 'cross-site' } })
    t.equal(read.statusCode, 200)
    const sameOrigin = await app.inject({
      method: 'POST', url: `/studio/component-groups/${id}/versions/1/restore`, headers: { cookie, 'sec-fetch-site': 'same-origin' }
    })
    t.equal(sameOrigin.statusCode, 200, sameOrigin.body)
    const byOrigin = await app.inject({
      method: 'POST', url: `/studio/component-groups/${id}/versions/1/restore`, headers: { cookie, origin: 'http://localhost:80', host: 'localhost:80' }
    })
    t.equal(byOrigin.statusCode, 200, 'an Origin equal to the address the request was sent to')
    const curl = await app.inject({ method: 'POST', url: `/studio/component-groups/${id}/versions/1/restore`, headers: { cookie } })
    t.equal(curl.statusCode, 200, 'neither header: not a browser')
    t.equal(await version(), 4)
  })

  t.test('Basic and Bearer credentials are not the browser\'s to send: no origin check', async (t) => {
    const basic = await app.inject({
      method: 'POST',
      url: `/studio/component-groups/${id}/versions/1/restore`,
      headers: { authorization: adminAuth, cookie, 'sec-fetch-site': 'cross-site', origin: 'http://elsewhere.example' }
    })
    t.equal(basic.statusCode, 200)
    const bearer = await app.inject({
      method: 'POST',
      url: `/studio/component-groups/${id}/versions/1/restore`,
      headers: { authorization: `Bearer ${login.json() as string}`, 'sec-fetch-site': 'cross-site' }
    })
    t.equal(bearer.statusCode, 200)
  })

  t.test('a 401: the Basic challenge for every client but the page', async (t) => {
    const curl = await app.inject({ url: '/whoami' })
    t.equal(curl.statusCode, 401)
    t.equal(curl.headers['www-authenticate'], 'Basic realm="netauto"')
    const page = await app.inject({ url: '/whoami', headers: { 'x-requested-with': 'netauto-studio' } })
    t.equal(page.statusCode, 401)
    t.equal(page.headers['www-authenticate'], undefined, 'no challenge: the browser opens no dialog')
    t.equal(page.json().code, 'INVALID_CREDENTIALS')
    const staleCookie = await app.inject({ url: '/whoami', headers: { cookie: 'token=' + 'a'.repeat(43), 'x-requested-with': 'netauto-studio' } })
    t.equal(staleCookie.statusCode, 401)
    t.equal(staleCookie.headers['www-authenticate'], undefined)
    const staleForCurl = await app.inject({ url: '/whoami', headers: { cookie: 'token=' + 'a'.repeat(43) } })
    t.match(staleForCurl.headers['www-authenticate'], /^Basic realm="netauto", Bearer/)
  })

  t.test('GET /logout from the service\'s own origin, or typed in the address bar, ends the session', async (t) => {
    for (const site of ['same-origin', 'none']) {
      const own = await app.inject({ method: 'POST', url: '/login', payload: { user: ADMIN } })
      const session = `token=${own.json() as string}`
      const out = await app.inject({ method: 'GET', url: '/logout', headers: { cookie: session, 'sec-fetch-site': site } })
      t.same([out.statusCode, out.json()], [200, { loggedOut: true }], site)
      t.equal((await app.inject({ url: '/whoami', headers: { cookie: session } })).statusCode, 401, `${site}: the session is over`)
    }
  })
})
