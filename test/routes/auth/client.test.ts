// A platform client script, as users write them: plain fetch against a listening server, log in
// with POST /login, keep the cookie the server set, then work with it.
import t from 'tap'
import { ADMIN, buildTestApp, testDatabases } from '../../helper.js'

for (const database of testDatabases) {
  t.test(`a script logs in, keeps the cookie, creates, reads and deletes a component group (${database})`, async (t) => {
    const app = await buildTestApp(t, { database })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })

    // A minimal cookie jar: what Set-Cookie gave, sent back as Cookie.
    const jar = new Map<string, string>()
    const call = async (method: string, path: string, body?: unknown): Promise<Response> => {
      const headers: Record<string, string> = { accept: 'application/json' }
      if (jar.size > 0) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
      if (body !== undefined) headers['content-type'] = 'application/json'
      const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) })
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';')
        const eq = pair?.indexOf('=') ?? -1
        if (pair !== undefined && eq > 0) jar.set(pair.slice(0, eq), pair.slice(eq + 1))
      }
      return response
    }

    const unauthenticated = await call('GET', '/studio/component-groups')
    t.equal(unauthenticated.status, 401)

    const login = await call('POST', '/login', { user: { username: ADMIN.username, password: ADMIN.password } })
    t.equal(login.status, 200)
    t.match(login.headers.get('content-type'), /^application\/json/)
    const token = await login.json() as string
    t.equal(jar.get('token'), token, 'the cookie carries the token the body answered')

    const created = await call('POST', '/studio/component-groups', { componentGroup: { name: 'edge-routers', members: [{ path: ['sites', 'east'], type: 'folder' }], gbacRead: [] } })
    t.equal(created.status, 200)
    const { created: group } = await created.json() as { created: { _id: string, name: string, version: number } }
    t.match(group, { name: 'edge-routers', version: 1 })

    const read = await call('GET', `/studio/component-groups/${group._id}`)
    t.equal(read.status, 200)
    t.match(await read.json(), { _id: group._id, name: 'edge-routers', members: [{ path: ['sites', 'east'], type: 'folder' }] })

    const deleted = await call('DELETE', `/studio/component-groups/${group._id}`)
    t.equal(deleted.status, 200)
    t.equal((await call('GET', `/studio/component-groups/${group._id}`)).status, 404)

    const who = await call('GET', '/whoami')
    t.match(await who.json(), { username: ADMIN.username, authenticatedBy: 'cookie' })
    const out = await call('GET', '/logout')
    t.equal(out.status, 200)
    t.equal(jar.get('token'), '', 'the server cleared the cookie')
    jar.set('token', token)
    t.equal((await call('GET', '/studio/component-groups')).status, 401, 'the old token no longer works')
  })
}
