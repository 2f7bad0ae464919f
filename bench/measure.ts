// Shared by every benchmark scenario: load generation, A/B alternation and the report line.
import autocannon from 'autocannon'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { Latencies } from './latencies.js'

export interface Target {
  url: string
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE'
  headers?: Record<string, string>
  body?: string
}

export interface LoadFigures {
  rps: number
  p50: number
  p99: number
  errors: number
  non2xx: number
}

export interface LoadOptions {
  connections: number
  seconds: number
}

/** Load that is not an HTTP target (a baseline that talks to the database itself, say). */
export type Runner = (options: LoadOptions) => Promise<LoadFigures>

/** Prints one scenario's figures as a single JSON line. */
export function report (line: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(line) + '\n')
}

export async function load (target: Target, options: LoadOptions): Promise<LoadFigures> {
  // autocannon's own percentiles are whole milliseconds (3 ms against 2 ms reads as 1.5x); each
  // response's time arrives in fractions of one, and is kept here for 2xx answers as autocannon does.
  const latencies = new Latencies()
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon({
      url: target.url,
      method: target.method ?? 'GET',
      headers: target.headers,
      body: target.body,
      connections: options.connections,
      duration: options.seconds
    }, (err, result) => { if (err !== null && err !== undefined) reject(err); else resolve(result) })
    run.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.add(responseTime)
    })
  })
  return {
    rps: result.requests.average,
    p50: latencies.percentile(50),
    p99: latencies.percentile(99),
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx
  }
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] ?? 0 : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/**
 * Loads `candidate` and `baseline` in alternating rounds (A B A B ...) so that a noisy machine
 * slows both alike, and compares the medians: `ratio` is candidate/baseline requests per second,
 * `p99Ratio` candidate/baseline p99 latency.
 */
export async function compare (candidate: Target | Runner, baseline: Target | Runner, options: LoadOptions & { rounds?: number, warmupSeconds?: number }) {
  const rounds = options.rounds ?? 3
  const warm = { connections: options.connections, seconds: options.warmupSeconds ?? 1 }
  const run = async (x: Target | Runner, o: LoadOptions) => typeof x === 'function' ? await x(o) : await load(x, o)
  await run(candidate, warm)
  await run(baseline, warm)
  const a: LoadFigures[] = []
  const b: LoadFigures[] = []
  for (let i = 0; i < rounds; i++) {
    a.push(await run(candidate, options))
    b.push(await run(baseline, options))
  }
  const summary = (runs: LoadFigures[]) => ({
    rps: Math.round(median(runs.map((r) => r.rps))),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0)
  })
  const service = summary(a)
  const base = summary(b)
  return {
    service,
    baseline: base,
    ratio: Number((service.rps / base.rps).toFixed(3)),
    p99Ratio: Number((service.p99 / Math.max(base.p99, 0.001)).toFixed(3))
  }
}

export interface PgLoadSpec {
  url: string
  sql: string
  params: unknown[]
}

/**
 * The database-only baseline: `connections` loops, each issuing `sql` one query after another
 * through a pg Pool of that size, for `seconds`. It runs in a child process (dist/bench/pg-load.js)
 * so it never shares an event loop with the load generator.
 */
export function pgLoad (spec: PgLoadSpec): Runner {
  return async (options) => {
    const script = fileURLToPath(new URL('./pg-load.js', import.meta.url))
    const child = spawn(process.execPath, [script, JSON.stringify({ ...spec, ...options })], { stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
    const [code] = await once(child, 'exit') as [number | null]
    if (code !== 0) throw new Error(`pg-load exited with ${String(code)}: ${output}`)
    return JSON.parse(output) as LoadFigures
  }
}

export interface ChildServer {
  url: string
  child: ChildProcess
  stop: () => Promise<void>
}

/**
 * Starts `node dist/bench/serve.js <kind>` in its own process with `env`, and resolves once it
 * prints the address it listens on.
 */
export async function startServer (kind: string, env: Record<string, string | undefined> = {}): Promise<ChildServer> {
  const script = fileURLToPath(new URL('./serve.js', import.meta.url))
  const child = spawn(process.execPath, [script, kind], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = /LISTENING (\S+)/.exec(output)
      if (match?.[1] !== undefined) resolve(match[1])
    })
    child.once('exit', (code) => { reject(new Error(`bench server "${kind}" exited with ${String(code)}: ${output}`)) })
  })
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  }
}

/**
 * A schema of its own on the PostgreSQL server (BENCH_DATABASE_URL, else the local one) for a
 * scenario named `name`, or undefined when no server answers.
 */
export async function serverSchema (name: string): Promise<{ url: string, drop: () => Promise<void> } | undefined> {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const schema = `bench_${name}_${randomBytes(4).toString('hex')}`
  const run = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 2000 })
    await client.connect()
    try { await client.query(sql) } finally { await client.end() }
  }
  try {
    await run(`CREATE SCHEMA ${schema}`)
  } catch {
    return undefined
  }
  const url = new URL(serverUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return { url: url.toString(), drop: async () => { await run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`) } }
}
