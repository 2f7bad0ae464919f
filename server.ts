import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './plugins/core/config.js'
import { SecretKeyRefused } from './plugins/core/secret-key-check.js'

let config
try {
  config = loadConfig(process.env, { dotenv: true })
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  process.stderr.write(`${err.message}\n`)
  process.exit(1)
}

// Every file the service creates (embedded database, Git cache, key file) is its user's alone;
// what an earlier start left is repaired at start (plugins/core/data-dir.ts).
process.umask(0o077)

// A start refused (the secret key is not the database's): the reason alone, as for the configuration.
const app = await buildApp(config).catch((err: unknown) => {
  if (!(err instanceof SecretKeyRefused)) throw err
  process.stderr.write(`${err.message}\n`)
  process.exit(1)
})

// On SIGTERM/SIGINT: stop accepting connections, let in-flight requests finish, close the pools.
closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'closing after an error')
  else app.log.info({ signal }, 'closing')
  await app.close()
})

try {
  await app.listen({ port: config.PORT, host: config.HOST })
} catch (err) {
  app.log.error({ err }, 'could not start listening')
  process.exit(1)
}
