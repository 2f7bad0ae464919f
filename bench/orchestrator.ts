// Orchestrator scenario: restQuery through the service against a plain @fastify/reply-from proxy
// relaying the same GET to the same NSO stand-in (its own process), same connections and duration.
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { request } from 'undici'
import { compare, median, postgresTicks, report, serverSchema, startServer, type ChildServer, type Target } from './measure.js'
import { JsonChecker } from '../lib/orchestrator/json-check.js'
import { largeDocument } from '../test/fixtures/nso-server.js'

const ADMIN_PASSWORD = 'bench-admin-password'
const auth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
// The stand-in's default credentials.
const NSO_AUTH = 'Basic ' + Buffer.from('admin:admin').toString('base64')
const CONNECTIONS = 10
const DOCUMENT = '/restconf/data/tailf-ncs:devices/device=ce0'
const ACCEPT = 'application/yang-data+json'

export async function restQueryVsReplyFrom (): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-orchestrator-'))
  // The PostgreSQL server when one answers: the embedded database's first start (initdb in WASM)
  // can exceed the plugin start-up limit on a loaded machine. The relayed calls never touch the
  // database either way (adapter rows and credentials are cached).
  const database = await serverSchema('orchestrator')
  // Whatever started is stopped, also when a later server fails to start.
  const started: ChildServer[] = []
  const start = async (kind: string, env?: Record<string, string>): Promise<ChildServer> => {
    const server = await startServer(kind, env)
    started.push(server)
    return server
  }
  try {
    const nso = await start('nso')
    const service = await start('service', {
      DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', ADMIN_PASSWORD, ORCHESTRATOR_POOL_CONNECTIONS: String(CONNECTIONS)
    })
    const proxy = await start('reply-from', { UPSTREAM_URL: nso.url, UPSTREAM_AUTHORIZATION: NSO_AUTH, UPSTREAM_CONNECTIONS: String(CONNECTIONS) })
    const created = await fetch(`${service.url}/orchestrator_manager/adapters`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'bench', baseUrl: nso.url, username: 'admin', password: 'admin' })
    })
    if (created.status !== 200) throw new Error(`creating the adapter: ${created.status} ${await created.text()}`)

    // The PostgreSQL server's CPU during each side's rounds, when it runs on this machine: the
    // audit trail's writes are work done on the same cores (reply-from's reads its idle cost).
    const sideTicks = database === undefined ? undefined : postgresTicks
    const candidate = {
      url: `${service.url}/orchestrator_manager/restQuery/bench`,
      method: 'POST' as const,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ params: { path: DOCUMENT, accept: ACCEPT } }),
      pid: service.child.pid,
      sideTicks
    }
    const baseline = { url: proxy.url + DOCUMENT, headers: { accept: ACCEPT }, pid: proxy.child.pid, sideTicks }
    // Both must relay the same document before their speed means anything.
    const [viaService, viaProxy] = await Promise.all([
      fetch(candidate.url, candidate).then(async (r) => `${r.status} ${await r.text()}`),
      fetch(baseline.url, baseline).then(async (r) => `${r.status} ${await r.text()}`)
    ])
    if (viaService !== viaProxy || !viaService.startsWith('200 ')) throw new Error(`different answers: ${viaService} / ${viaProxy}`)

    const result = await compare(candidate, baseline, { connections: CONNECTIONS, seconds: 3, rounds: 5 })
    report({
      scenario: 'orchestrator-restquery-vs-reply-from',
      target: 'cpuRatio >= 0.75',
      database: database === undefined ? 'embedded' : 'postgres',
      // sideCpuUsPerRequest: the PostgreSQL server's processes (when local), not in cpuRatio.
      bytes: viaService.length - 4,
      ...result
    })
  } finally {
    for (const server of started.reverse()) await server.stop()
    await database?.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

const LARGE_PATH = '/restconf/data/large'
const LARGE_BYTES = 50 * 1024 * 1024
const LARGE_CALLS = 8

/** Resident set size of process `pid` in bytes (Linux /proc), undefined elsewhere. */
function rssOf (pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

interface LargeRun {
  /** Peak RSS minus RSS before the calls, in MB. */
  rssGrowthMb: number
  /** From sending the 8 calls to the last byte of the last answer, in ms. */
  lastByteMs: number
}

/** `LARGE_CALLS` calls at once to `target` (answered by process `pid`), each answer read and dropped. */
async function largeCalls (target: Target, pid: number, expectBytes: number): Promise<LargeRun> {
  const before = rssOf(pid) ?? 0
  let peak = before
  const sampler = setInterval(() => { peak = Math.max(peak, rssOf(pid) ?? 0) }, 10)
  const started = performance.now()
  try {
    const sizes = await Promise.all(Array.from({ length: LARGE_CALLS }, async () => {
      const response = await request(target.url, { method: target.method ?? 'GET', headers: target.headers, body: target.body })
      if (response.statusCode !== 200) throw new Error(`${target.url}: ${response.statusCode} ${await response.body.text()}`)
      let size = 0
      for await (const chunk of response.body) size += (chunk as Buffer).length
      return size
    }))
    if (sizes.some((size) => size < expectBytes)) throw new Error(`${target.url}: answers of ${sizes.join(', ')} bytes`)
  } finally {
    clearInterval(sampler)
  }
  const lastByteMs = performance.now() - started
  peak = Math.max(peak, rssOf(pid) ?? 0)
  return { rssGrowthMb: Number(((peak - before) / 1024 / 1024).toFixed(1)), lastByteMs: Math.round(lastByteMs) }
}

/**
 * restQuery and restAction of a 50 MB answer, 8 calls at once, against @fastify/reply-from relaying
 * the same GET to the same stand-in: peak RSS growth and time to the last byte. Each side is
 * measured in a process of its own, started for the round (RSS is not given back, so a second
 * measurement in one process would read less); the rounds alternate which side goes first.
 */
export async function largeAnswersVsReplyFrom (): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-orchestrator-large-'))
  const database = await serverSchema('orchestrator_large')
  const started: ChildServer[] = []
  const start = async (kind: string, env?: Record<string, string>): Promise<ChildServer> => {
    const server = await startServer(kind, env)
    started.push(server)
    return server
  }
  const stop = async (server: ChildServer): Promise<void> => {
    await server.stop()
    started.splice(started.indexOf(server), 1)
  }
  try {
    const nso = await start('nso', { NSO_LARGE_BYTES: String(LARGE_BYTES), NSO_LARGE_PATH: LARGE_PATH })
    const serviceEnv = { DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', ADMIN_PASSWORD, ORCHESTRATOR_POOL_CONNECTIONS: String(CONNECTIONS) }
    const setup = await start('service', serviceEnv)
    const created = await fetch(`${setup.url}/orchestrator_manager/adapters`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'bench', baseUrl: nso.url, username: 'admin', password: 'admin', timeoutMs: 600_000 })
    })
    if (created.status !== 200) throw new Error(`creating the adapter: ${created.status} ${await created.text()}`)
    await stop(setup)

    const side = {
      proxy: async (): Promise<LargeRun> => {
        const proxy = await start('reply-from', { UPSTREAM_URL: nso.url, UPSTREAM_AUTHORIZATION: NSO_AUTH, UPSTREAM_CONNECTIONS: String(CONNECTIONS) })
        try {
          return await largeCalls({ url: proxy.url + LARGE_PATH, headers: { accept: ACCEPT } }, proxy.child.pid ?? 0, LARGE_BYTES)
        } finally { await stop(proxy) }
      },
      restQuery: async (): Promise<LargeRun> => await viaService('restQuery', { params: { path: LARGE_PATH, accept: ACCEPT } }),
      restAction: async (): Promise<LargeRun> => await viaService('restAction', { params: { path: LARGE_PATH, accept: ACCEPT, method: 'GET' }, body: {} })
    }
    async function viaService (operation: string, body: object): Promise<LargeRun> {
      const service = await start('service', serviceEnv)
      try {
        const target: Target = {
          url: `${service.url}/orchestrator_manager/${operation}/bench`,
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify(body)
        }
        // One small call first, so that start-up allocations (adapter row, pool) are not counted.
        await request(`${service.url}/orchestrator_manager/restQuery/bench`, {
          method: 'POST', headers: target.headers, body: JSON.stringify({ params: { path: DOCUMENT, accept: ACCEPT } })
        }).then(async (r) => await r.body.dump())
        return await largeCalls(target, service.child.pid ?? 0, LARGE_BYTES)
      } finally { await stop(service) }
    }

    const rounds: Array<Record<keyof typeof side, LargeRun>> = []
    const order: Array<keyof typeof side> = ['proxy', 'restQuery', 'restAction']
    for (let round = 0; round < 2; round++) {
      const runs: Partial<Record<keyof typeof side, LargeRun>> = {}
      for (const name of round % 2 === 0 ? order : [...order].reverse()) runs[name] = await side[name]()
      rounds.push(runs as Record<keyof typeof side, LargeRun>)
    }
    const ratio = (of: (r: Record<keyof typeof side, LargeRun>) => number): number => Number(median(rounds.map(of)).toFixed(2))
    const figures = (name: keyof typeof side) => ({
      rssGrowthMb: Number(median(rounds.map((r) => r[name].rssGrowthMb)).toFixed(1)),
      lastByteMs: median(rounds.map((r) => r[name].lastByteMs))
    })
    report({
      scenario: 'orchestrator-large-answers-vs-reply-from',
      target: 'against the proxy: rssRatio <= 2 for each; lastByteRatio <= 1.5 for restQuery, <= 2.5 for restAction (which checks every byte)',
      database: database === undefined ? 'embedded' : 'postgres',
      calls: LARGE_CALLS,
      bytes: LARGE_BYTES,
      proxy: figures('proxy'),
      restQuery: {
        ...figures('restQuery'),
        rssRatio: ratio((r) => r.restQuery.rssGrowthMb / Math.max(r.proxy.rssGrowthMb, 1)),
        lastByteRatio: ratio((r) => r.restQuery.lastByteMs / r.proxy.lastByteMs)
      },
      restAction: {
        ...figures('restAction'),
        rssRatio: ratio((r) => r.restAction.rssGrowthMb / Math.max(r.proxy.rssGrowthMb, 1)),
        lastByteRatio: ratio((r) => r.restAction.lastByteMs / r.proxy.lastByteMs)
      },
      rounds
    })
  } finally {
    for (const server of started.reverse()) await server.stop()
    await database?.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

/** Milliseconds `run` takes. */
function timed (run: () => void): number {
  const started = performance.now()
  run()
  return performance.now() - started
}

/**
 * The JSON check of restAction alone (lib/orchestrator/json-check.ts), in this process, on the
 * large answer of the scenario above in 64 KiB chunks, against JSON.parse of the same bytes (what
 * checking by parsing would cost). For information: a loop that only reads every byte, the least
 * any check written in JavaScript costs. 7 rounds, the order turning; medians.
 */
export async function jsonCheckVsJsonParse (): Promise<void> {
  const document = largeDocument(LARGE_BYTES)
  const chunks: Buffer[] = []
  for (let at = 0; at < document.length; at += 64 * 1024) chunks.push(document.subarray(at, at + 64 * 1024))
  const check = (): void => {
    const checker = new JsonChecker()
    for (const chunk of chunks) if (checker.write(chunk) !== undefined) throw new Error('the document is not valid JSON')
    if (checker.end() !== undefined) throw new Error('the document is not valid JSON')
  }
  const parse = (): void => { JSON.parse(document.toString()) }
  let sum = 0
  const readEveryByte = (): void => {
    for (const chunk of chunks) {
      let s = 0
      for (let i = 0; i < chunk.length; i++) s = (s + (chunk[i] as number)) | 0
      sum ^= s
    }
  }
  type Round = Record<'checkMs' | 'parseMs' | 'byteLoopMs', number>
  const runs: Array<[keyof Round, () => void]> = [['checkMs', check], ['parseMs', parse]]
  const rounds: Round[] = []
  for (let round = 0; round < 7; round++) {
    const times: Partial<Round> = {}
    for (let k = 0; k < runs.length; k++) {
      const [name, run] = runs[(round + k) % runs.length] as [keyof Round, () => void]
      times[name] = timed(run)
    }
    rounds.push({ ...times, byteLoopMs: timed(readEveryByte) } as Round)
  }
  const mb = document.length / 1024 / 1024
  const checkMs = median(rounds.map((r) => r.checkMs))
  report({
    scenario: 'orchestrator-json-check-vs-json-parse',
    target: 'none: for information (the target is restAction\'s, in orchestrator-large-answers)',
    bytes: document.length,
    checkMs: Math.round(checkMs),
    checkMBps: Math.round(mb / checkMs * 1000),
    parseMs: Math.round(median(rounds.map((r) => r.parseMs))),
    byteLoopMs: Math.round(median(rounds.map((r) => r.byteLoopMs))),
    timeRatio: Number(median(rounds.map((r) => r.checkMs / r.parseMs)).toFixed(2)),
    overByteLoop: Number(median(rounds.map((r) => r.checkMs / r.byteLoopMs)).toFixed(2)),
    // Used, so the byte loop is not optimised away.
    ...(sum === 0.5 ? { sum } : {})
  })
}
