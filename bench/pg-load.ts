// Child process of pgLoad() (measure.ts): runs one query in concurrent loops through a pg Pool
// and prints the figures as one JSON line, in the units autocannon uses (per second, ms).
import pg from 'pg'
import type { LoadFigures, LoadOptions, PgLoadSpec } from './measure.js'

const spec = JSON.parse(process.argv[2] ?? '{}') as PgLoadSpec & LoadOptions
const pool = new pg.Pool({ connectionString: spec.url, max: spec.connections })

// Every connection is open before the clock starts, as a running service's pool is.
const clients = await Promise.all(Array.from({ length: spec.connections }, async () => await pool.connect()))
for (const client of clients) client.release()

const latencies: number[] = []
let errors = 0
const started = performance.now()
const deadline = started + spec.seconds * 1000
async function loop (): Promise<void> {
  while (performance.now() < deadline) {
    const sent = performance.now()
    try {
      await pool.query(spec.sql, spec.params)
      latencies.push(performance.now() - sent)
    } catch {
      errors++
    }
  }
}
await Promise.all(Array.from({ length: spec.connections }, loop))
const elapsed = (performance.now() - started) / 1000
await pool.end()

latencies.sort((a, b) => a - b)
const at = (q: number): number => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2))
const figures: LoadFigures = { rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), errors, non2xx: 0 }
process.stdout.write(JSON.stringify(figures) + '\n')
