import { ConfigError, loadConfig } from './plugins/core/config.js'
import { migrate, openDatabase } from './plugins/database/index.js'

// Applies pending migrations and exits; the service also does this at every start.
try {
  const config = loadConfig(process.env, { dotenv: true })
  const db = await openDatabase(config)
  try {
    const applied = await migrate(db)
    process.stdout.write(applied.length === 0 ? 'No pending migrations\n' : `Applied: ${applied.join(', ')}\n`)
  } finally {
    await db.close()
  }
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`)
  process.exit(1)
}
