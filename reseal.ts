import { ConfigError, loadConfig } from './plugins/core/config.js'
import { openDatabase } from './plugins/database/index.js'
import { secretSealer } from './plugins/core/secrets.js'
import { resealAll } from './reseal-all.js'
import { recordResealedKey } from './plugins/core/secret-key-check.js'

// Seals every stored secret (adapter passwords, users' Git tokens) that a key of
// SECRET_KEY_PREVIOUS sealed under SECRET_KEY (or their old names, ORCHESTRATOR_SECRET_KEY...),
// and exits; 1 when some value opens with none of them (each is named).
try {
  const config = loadConfig(process.env, { dotenv: true })
  const db = await openDatabase(config)
  try {
    const log = { warn: (details: object, message: string) => { process.stderr.write(`${message} ${JSON.stringify(details)}\n`) } }
    const sealer = secretSealer(config, log)
    const counts = await resealAll(db, sealer)
    const { variable, previousVariable } = sealer.settings
    process.stdout.write(`Resealed: ${counts.resealed}, already under the current key: ${counts.current}, unreadable: ${counts.unreadable.length}\n`)
    for (const row of counts.unreadable) {
      process.stderr.write(`${row}: sealed with a key that neither ${variable} nor ${previousVariable} opens\n`)
    }
    if (counts.unreadable.length > 0) process.exitCode = 1
    else if (await recordResealedKey(db, sealer)) process.stdout.write(`The database now records the fingerprint of ${variable}.\n`)
  } finally {
    await db.close()
  }
} catch (err) {
  process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`)
  process.exit(1)
}
