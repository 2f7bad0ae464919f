// The processes benchmarks load: `service` (the real app, configured from the environment) or a
// baseline. Each prints "LISTENING <url>" once it accepts connections.
import Fastify from 'fastify'
import { buildApp } from '../app.js'
import { loadConfig } from '../plugins/config.js'

const kind = process.argv[2]

async function start (): Promise<string> {
  switch (kind) {
    case 'service': {
      const app = await buildApp(loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1' }))
      process.once('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
      return await app.listen({ port: 0, host: '127.0.0.1' })
    }
    case 'bare-true': {
      // The least a Fastify route can do: the baseline for the cost of our plugins and auth.
      const app = Fastify()
      app.get('/configuration_manager/ismaintenance', async () => true)
      process.once('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
      return await app.listen({ port: 0, host: '127.0.0.1' })
    }
    default:
      throw new Error(`unknown bench server kind: ${String(kind)}`)
  }
}

process.stdout.write(`LISTENING ${await start()}\n`)
