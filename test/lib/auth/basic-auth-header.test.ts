import t from 'tap'
import Fastify from 'fastify'
import basicAuth from '@fastify/basic-auth'
import { basicAuthorization } from '../../../lib/auth/basic-auth-header.js'

t.test('builds the header of RFC 7617 in UTF-8', async (t) => {
  t.equal(basicAuthorization('ann', 'pässword'), 'Basic ' + Buffer.from('ann:pässword', 'utf8').toString('base64'))
  t.equal(basicAuthorization('ann', ''), 'Basic ' + Buffer.from('ann:', 'utf8').toString('base64'))
})

// Headers this service receives are read by @fastify/basic-auth alone: the credentials it builds
// are read back as they were, colons and non-ASCII characters kept.
t.test('@fastify/basic-auth reads back the credentials it builds', async (t) => {
  const app = Fastify()
  let seen: { username: string, password: string } | undefined
  await app.register(basicAuth, { strictCredentials: false, validate: async (username, password) => { seen = { username, password } } })
  app.get('/', { onRequest: app.basicAuth }, async () => 'ok')
  t.teardown(async () => { await app.close() })
  for (const [username, password] of [['ann', 'pässword'], ['ann', 'se:cr:et'], ['中文', ''], ['bob', ' x ']]) {
    seen = undefined
    const response = await app.inject({ url: '/', headers: { authorization: basicAuthorization(username, password) } })
    t.equal(response.statusCode, 200)
    t.same(seen, { username, password })
  }
})
