// The processes benchmarks load: `service` (the real app, configured from the environment) or a
// baseline. Each prints "LISTENING <url>" once it accepts connections.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import replyFrom from '@fastify/reply-from'
import { APP_BLOCKS, buildApp, REDACTED_PATHS } from '../app.js'
import { loadConfig, type Config } from '../plugins/core/config.js'
import { serverOptions } from '../plugins/core/server-options.js'
import corePlugin from '../plugins/core/index.js'
import { PART_ROUTE, SERVICE_PART_NAMES, type ServicePart } from './foundation.js'
import { requestIdGenerator } from '../lib/http/ids.js'
import { largeDocument, startNsoServer } from '../test/fixtures/nso-server.js'

const kind = process.argv[2]

// Listens on a free loopback port; SIGTERM closes the app, then the process.
async function listen (app: FastifyInstance): Promise<string> {
  process.once('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
  return await app.listen({ port: 0, host: '127.0.0.1' })
}

// The lightest route there is: GET /configuration_manager/ismaintenance answering true.
async function answerTrue (options: FastifyServerOptions): Promise<string> {
  const app = Fastify(options)
  app.get('/configuration_manager/ismaintenance', async () => true)
  return await listen(app)
}

// The service built up to `part` (app.ts's blocks, in order), with a route that needs no
// credentials: what every request pays for the plugins registered so far.
async function servicePart (config: Config, part: ServicePart): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(config))
  await app.register(corePlugin, { config })
  if (part !== 'core') {
    if (!APP_BLOCKS.some((block) => block.name === part)) throw new Error(`app.ts has no block named ${part}`)
    for (const block of APP_BLOCKS) {
      for (const plugin of block.plugins) await app.register(plugin)
      if (block.name === part) break
    }
  }
  app.get(PART_ROUTE, { schema: { response: { 200: { type: 'boolean' } } } }, async () => true)
  return app
}

async function start (): Promise<string> {
  switch (kind) {
    case 'service': {
      const app = await buildApp(loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1' }))
      return await listen(app)
    }
    case 'service-part': {
      const part = process.env.SERVICE_PART as ServicePart
      if (!SERVICE_PART_NAMES.includes(part)) throw new Error(`SERVICE_PART must be one of ${SERVICE_PART_NAMES.join(', ')}`)
      return await listen(await servicePart(loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1' }), part))
    }
    case 'bare-true':
      // The least a Fastify route can do: the baseline for the cost of our plugins and auth.
      return await answerTrue({})
    case 'logging-true':
      // The same route on a Fastify that logs like the service: pino at LOG_LEVEL with the same
      // redaction, request ids made the same way, a child logger per request. What the service
      // costs beyond this is its own.
      return await answerTrue({
        logger: { level: process.env.LOG_LEVEL ?? 'info', redact: REDACTED_PATHS },
        requestIdHeader: 'x-request-id',
        genReqId: requestIdGenerator()
      })
    case 'nso': {
      // The NSO stand-in as an upstream of its own, so relaying does not share its event loop.
      const nso = await startNsoServer()
      // NSO_LARGE_PATH answers a generated JSON document of NSO_LARGE_BYTES bytes.
      const largeBytes = Number(process.env.NSO_LARGE_BYTES ?? 0)
      if (largeBytes > 0) nso.raw.set(process.env.NSO_LARGE_PATH ?? '/restconf/data/large', { contentType: 'application/yang-data+json', body: largeDocument(largeBytes) })
      process.once('SIGTERM', () => { void nso.close().then(() => process.exit(0)) })
      return nso.url
    }
    case 'reply-from': {
      // A plain Fastify proxy: GET <path> relayed to UPSTREAM_URL with the upstream's credentials,
      // the baseline for the cost of restQuery. Same undici pool size as the service's adapters.
      const upstream = process.env.UPSTREAM_URL
      const authorization = process.env.UPSTREAM_AUTHORIZATION
      if (upstream === undefined || authorization === undefined) throw new Error('reply-from needs UPSTREAM_URL and UPSTREAM_AUTHORIZATION')
      const app = Fastify()
      await app.register(replyFrom, { base: upstream, undici: { connections: Number(process.env.UPSTREAM_CONNECTIONS ?? 10), pipelining: 1 } })
      app.get('/*', async (request, reply) => {
        return await reply.from(request.url, { rewriteRequestHeaders: (_req, headers) => ({ ...headers, authorization }) })
      })
      return await listen(app)
    }
    default:
      throw new Error(`unknown bench server kind: ${String(kind)}`)
  }
}

process.stdout.write(`LISTENING ${await start()}\n`)
