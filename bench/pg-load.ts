// Child process of pgLoad() (measure.ts): runs one query in concurrent loops through a pg Pool
// and prints the figures as one JSON line, in the units autocannon uses (per second, ms).
import pg from 'pg'
import { Latencies } from './latencies.js'
import type { LoadFigures, LoadOptions, PgLoadSpec } from './measure.js'

const spec = JSON.parse(process.argv[2] ?? '{}') as PgLoadSpec & LoadOptions
const pool = new pg.Pool({ connectionString: spec.url, max: spec.connections })

// Every connection is open before the clock starts, as a running service's pool is.
const clients = await Promise.all(Array.from({ length: spec.connections }, async () => await pool.connect()))
for (const client of clients) client.release()

const latencies = new Latencies()
let answered = 0
let errors = 0
const started = performance.now()
const deadline = started + spec.seconds * 1000
async function loop (): Promise<void> {
  while (performance.now() < deadline) {
    const sent = performance.now()
    try {
      await pool.query(spec.sql, spec.params)
      latencies.add(performance.now() - sent)
      answered++
    } catch {
      errors++
    }
  }
}
await Promise.all(Array.from({ length: spec.connections }, loop))
const elapsed = (performance.now() - started) / 1000
await pool.end()

const figures: LoadFigures = { rps: answered / elapsed, p50: latencies.percentile(50), p99: latencies.percentile(99), errors, non2xx: 0 }
process.stdout.write(JSON.stringify(figures) + '\n')
