// Shared by every benchmark scenario: load generation, A/B alternation and the report line.
import autocannon from 'autocannon'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { Latencies } from './latencies.js'

export interface Target {
  url: string
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE'
  headers?: Record<string, string>
  body?: string
  /** The process answering: its CPU time per request is measured too (where /proc exists). */
  pid?: number
  /**
   * Clock ticks of CPU time used so far by other processes on this machine that work for the
   * target (the PostgreSQL server's): measured per request beside the target's own.
   */
  sideTicks?: () => number | undefined
}

export interface LoadFigures {
  rps: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  /** CPU time (user + system, in clock ticks) the target's process spent per 1,000 requests. */
  cpuPer1k?: number
  /** The same for the processes of the target's `sideTicks`. */
  sideCpuPer1k?: number
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

/** Clock ticks of CPU time (user + system) process `pid` has used so far; undefined without /proc. */
export function cpuTicks (pid: number): number | undefined {
  try {
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return undefined
  }
}

/**
 * Clock ticks of CPU time used so far by the PostgreSQL server's processes on this machine
 * (the postmaster, its backends and background workers, by command name); undefined without
 * /proc or without such a process (a server on another host), never a zero that reads as idle.
 * A backend that exits during a round takes its time with it.
 */
export function postgresTicks (): number | undefined {
  try {
    let ticks: number | undefined
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      let command: string
      try { command = readFileSync(`/proc/${entry}/comm`, 'utf8').trim() } catch { continue }
      if (command === 'postgres') ticks = (ticks ?? 0) + (cpuTicks(Number(entry)) ?? 0)
    }
    return ticks
  } catch {
    return undefined
  }
}

export async function load (target: Target, options: LoadOptions): Promise<LoadFigures> {
  return await loadEach([target], options)
}

/**
 * Load on several targets at once, the connections shared out among them (each connection keeps
 * to one target: one writer per row, say); the figures are over all of them. The targets'
 * process is the first's.
 */
export async function loadEach (targets: Target[], options: LoadOptions): Promise<LoadFigures> {
  // autocannon's own percentiles are whole milliseconds (3 ms against 2 ms reads as 1.5x); each
  // response's time arrives in fractions of one, and is kept here for 2xx answers as autocannon does.
  const latencies = new Latencies()
  const pid = targets[0]?.pid
  const sideTicks = targets[0]?.sideTicks
  const cpuBefore = pid === undefined ? undefined : cpuTicks(pid)
  const sideBefore = sideTicks?.()
  const results = await Promise.all(targets.map(async (target, i) => await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon({
      url: target.url,
      method: target.method ?? 'GET',
      headers: target.headers,
      body: target.body,
      connections: Math.floor(options.connections / targets.length) + (i < options.connections % targets.length ? 1 : 0),
      duration: options.seconds
    }, (err, result) => { if (err !== null && err !== undefined) reject(err); else resolve(result) })
    run.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.add(responseTime)
    })
  })))
  const cpuAfter = pid === undefined ? undefined : cpuTicks(pid)
  const sideAfter = sideTicks?.()
  const cpu = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore
  const side = sideBefore === undefined || sideAfter === undefined ? undefined : sideAfter - sideBefore
  const sum = (of: (r: autocannon.Result) => number): number => results.reduce((n, r) => n + of(r), 0)
  const total = sum((r) => r.requests.total)
  return {
    rps: sum((r) => r.requests.average),
    p50: latencies.percentile(50),
    p99: latencies.percentile(99),
    errors: sum((r) => r.errors + r.timeouts),
    non2xx: sum((r) => r.non2xx),
    ...(cpu === undefined || total === 0 ? {} : { cpuPer1k: 1000 * cpu / total }),
    ...(side === undefined || total === 0 ? {} : { sideCpuPer1k: 1000 * side / total })
  }
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] ?? 0 : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/** The rounds of a comparison: `candidate[i]` was measured beside `baseline[i]`. */
export interface Rounds {
  candidate: LoadFigures[]
  baseline: LoadFigures[]
}

export interface RoundOptions extends LoadOptions {
  /** Measured pairs of rounds (3 unless given). */
  rounds?: number
  /** Unmeasured runs of each side before the first pair, each on new connections (1 unless given). */
  warmupRounds?: number
  warmupSeconds?: number
}

/**
 * Loads `candidate` and `baseline` in pairs of rounds, the first side of each pair alternating
 * (A B, B A, A B ...), so that a machine speeding up or slowing down during a pair favours
 * neither side over the run.
 */
export async function pairedRounds (candidate: Target | Runner, baseline: Target | Runner, options: RoundOptions): Promise<Rounds> {
  const run = async (x: Target | Runner, o: LoadOptions) => typeof x === 'function' ? await x(o) : await load(x, o)
  const warm = { connections: options.connections, seconds: options.warmupSeconds ?? 1 }
  for (let i = 0; i < (options.warmupRounds ?? 1); i++) {
    await run(candidate, warm)
    await run(baseline, warm)
  }
  const rounds: Rounds = { candidate: [], baseline: [] }
  for (let i = 0; i < (options.rounds ?? 3); i++) {
    if (i % 2 === 0) {
      rounds.candidate.push(await run(candidate, options))
      rounds.baseline.push(await run(baseline, options))
    } else {
      rounds.baseline.push(await run(baseline, options))
      rounds.candidate.push(await run(candidate, options))
    }
  }
  return rounds
}

/**
 * Compares each candidate round with the baseline round beside it, so that a noisy machine slows
 * both of a pair alike; the ratios are the medians over the pairs: `ratio` is candidate/baseline
 * requests per second, `p99Ratio` candidate/baseline p99 latency, and, when both are servers whose
 * process is known, `cpuRatio` baseline/candidate CPU time per request (1 = the same cost, 0.85 =
 * 1/0.85 of it). CPU time per request does not depend on how much CPU the load generator left the
 * server, so it reads the cost of a request more steadily than requests per second on a shared
 * machine.
 */
export function summarise ({ candidate: a, baseline: b }: Rounds) {
  const summary = (runs: LoadFigures[]) => {
    const cpu = runs.flatMap((r) => r.cpuPer1k === undefined ? [] : [r.cpuPer1k])
    const side = runs.flatMap((r) => r.sideCpuPer1k === undefined ? [] : [r.sideCpuPer1k])
    return {
      rps: Math.round(median(runs.map((r) => r.rps))),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      errors: runs.reduce((n, r) => n + r.errors, 0),
      non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
      // Clock ticks are 10 ms (USER_HZ 100): ticks per 1,000 requests times 10 is us per request.
      ...(cpu.length === 0 ? {} : { cpuUsPerRequest: Math.round(median(cpu) * 10) }),
      ...(side.length === 0 ? {} : { sideCpuUsPerRequest: Math.round(median(side) * 10) })
    }
  }
  const pairs = (of: (x: LoadFigures, y: LoadFigures) => number | undefined) => medianOfPairs(a, b, of)
  const cpuRatio = pairs((x, y) => x.cpuPer1k === undefined || y.cpuPer1k === undefined ? undefined : y.cpuPer1k / x.cpuPer1k)
  return {
    service: summary(a),
    baseline: summary(b),
    ratio: pairs((x, y) => x.rps / y.rps) ?? 0,
    p99Ratio: pairs((x, y) => x.p99 / Math.max(y.p99, 0.001)) ?? 0,
    ...(cpuRatio === undefined ? {} : { cpuRatio })
  }
}

/** Paired rounds of `candidate` and `baseline` in one pair of processes, summarised. */
export async function compare (candidate: Target | Runner, baseline: Target | Runner, options: RoundOptions) {
  return summarise(await pairedRounds(candidate, baseline, options))
}

/**
 * The median over rounds of `of(candidate's round, the baseline's round beside it)`, to three
 * decimals; undefined when a pair has no such figure.
 */
export function medianOfPairs (a: LoadFigures[], b: LoadFigures[], of: (x: LoadFigures, y: LoadFigures) => number | undefined): number | undefined {
  const values: number[] = []
  for (const [i, x] of a.entries()) {
    const y = b[i]
    const value = y === undefined ? undefined : of(x, y)
    if (value === undefined || !Number.isFinite(value)) return undefined
    values.push(value)
  }
  return values.length === 0 ? undefined : Number(median(values).toFixed(3))
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

/**
 * With BENCH_CPU_PROF=<directory>, each server process writes a V8 CPU profile there when it
 * stops (`<label>-<time>.cpuprofile`); `node dist/bench/profile-summary.js <directory>` reads them.
 */
export function profileArgs (label: string): string[] {
  const dir = process.env.BENCH_CPU_PROF
  if (dir === undefined || dir === '') return []
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${label}-${Date.now()}.cpuprofile`]
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
  const child = spawn(process.execPath, [...profileArgs(kind), script, kind], {
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
