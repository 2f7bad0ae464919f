// The check every test app runs on its exchanges (test/helpers/openapi.ts, watchExchanges): an
// answer or an accepted request the document does not describe is reported, naming the method,
// the path, the status and what differs.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import { watchExchanges } from '../helpers/openapi.js'

async function watched (t: Test, options: { requests?: boolean } = {}) {
  const problems: string[] = []
  const app = Fastify()
  watchExchanges(app, (problem) => { problems.push(problem) }, options)
  await app.register(swagger, { openapi: { openapi: '3.0.3', info: { title: 'watched', version: '1' } } })
  app.get('/teapots/:name', {
    schema: {
      params: { type: 'object', properties: { name: { type: 'string', maxLength: 8 } }, required: ['name'] },
      querystring: { type: 'object', properties: { limit: { type: 'integer', default: 10 } } },
      response: { 200: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }
    }
  }, async (request, reply) => {
    const { name } = request.params as { name: string }
    if (name === 'brew') throw Object.assign(new Error('I am a teapot'), { statusCode: 418 })
    if (name === 'nameless') return await reply.type('application/json').send('{}')
    if (name === 'etag') return await reply.header('etag', '"1"').send({ name })
    return { name }
  })
  app.get('/hidden', { schema: { hide: true } }, async () => ({ any: 'thing' }))
  t.teardown(async () => { await app.close() })
  await app.ready()
  return { app, problems }
}

t.test('an undeclared status, a body off its schema, an undeclared header: each reported', async (t) => {
  const { app, problems } = await watched(t)
  t.equal((await app.inject({ url: '/teapots/brew' })).statusCode, 418)
  t.same(problems.splice(0), ['GET /teapots/{name} 418: status not in the document'])
  await app.inject({ url: '/teapots/nameless' })
  t.match(problems.splice(0), [/^GET \/teapots\/\{name\} 200: body must have required property 'name'$/])
  await app.inject({ url: '/teapots/etag' })
  t.same(problems.splice(0), ['GET /teapots/{name} 200: header etag sent, not declared'])
  await app.inject({ url: '/teapots/fine?limit=3' })
  await app.inject({ url: '/hidden' })
  t.same(problems, [], 'a documented exchange, and a route left out of the document, pass')
})

t.test('an accepted request the document does not describe is reported, unless requests are left out', async (t) => {
  const { app, problems } = await watched(t)
  t.equal((await app.inject({ url: '/teapots/fine?colour=blue' })).statusCode, 200)
  t.same(problems.splice(0), ['GET /teapots/{name} request: query parameter colour sent, not declared'])
  const unchecked = await watched(t, { requests: false })
  await unchecked.app.inject({ url: '/teapots/fine?colour=blue' })
  t.same(unchecked.problems, [])
})
