import { ConfigError, loadConfig } from './plugins/core/config.js'
import { openDatabase } from './plugins/database/index.js'
import { secretSealer } from './plugins/core/secrets.js'
import { resealAll } from './reseal-all.js'

// Seals every stored secret (adapter passwords, users' Git tokens) that a key of
// ORCHESTRATOR_SECRET_KEY_PREVIOUS sealed under ORCHESTRATOR_SECRET_KEY, and exits; 1 when some
// value opens with none of them (each is named).
try {
  const config = loadConfig(process.env, { dotenv: true })
  const db = await openDatabase(config)
  try {
    const log = { warn: (details: object, message: string) => { process.stderr.write(`${message} ${JSON.stringify(details)}\n`) } }
    const counts = await resealAll(db, secretSealer(config, log))
    process.stdout.write(`Resealed: ${counts.resealed}, already under the current key: ${counts.current}, unreadable: ${counts.unreadable.length}\n`)
    for (const row of counts.unreadable) {
      process.stderr.write(`${row}: sealed with a key that neither ORCHESTRATOR_SECRET_KEY nor ORCHESTRATOR_SECRET_KEY_PREVIOUS opens\n`)
    }
    if (counts.unreadable.length > 0) process.exitCode = 1
  } finally {
    await db.close()
  }
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`)
  process.exit(1)
}
