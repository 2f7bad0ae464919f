// `node dist/bench/profile-summary.js <directory or file> [top] [fromMs] [untilMs]`: what the CPU
// profiles a benchmark wrote (BENCH_CPU_PROF=<directory>) say, one JSON line per profile: the main
// thread's busy time, and its self time by owner (a package, Node's internals, this service's
// folders, the garbage collector) and by function, largest first. `fromMs` and `untilMs` keep only
// that window of each profile, in ms from its start (`--against` reports each scenario's window
// as `profileWindowMs`), which leaves out start-up (loading modules, compiling schemas).
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'

interface ProfileNode {
  id: number
  callFrame: { functionName: string, url: string, lineNumber: number }
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

/** Who a frame's code belongs to: a package, Node's own modules, or a folder of this service. */
export function ownerOf (url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)'
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (packaged?.[1] !== undefined) return packaged[1]
  if (url.startsWith('node:')) return 'node'
  const own = /\/dist\/((?:bench|lib|plugins|routes|schemas)\/[^/]+|[^/]+\.js)/.exec(url)
  return own?.[1] ?? path.basename(url)
}

function ranked (times: Map<string, number>, busy: number, top: number) {
  return [...times].sort((a, b) => b[1] - a[1]).slice(0, top)
    .map(([name, us]) => ({ name, ms: Math.round(us / 100) / 10, share: Math.round(us / busy * 1000) / 1000 }))
}

/** The summary of one profile: busy time (idle and program left out) and self time by owner and function. */
export function summarise (profile: CpuProfile, top = 20, fromMs = 0, untilMs = Infinity) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]))
  const byOwner = new Map<string, number>()
  const byFunction = new Map<string, number>()
  let busy = 0
  let at = profile.startTime
  const from = profile.startTime + fromMs * 1000
  const until = profile.startTime + untilMs * 1000
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id)
    const us = profile.timeDeltas[i] ?? 0
    at += us
    if (at < from || at > until || frame === undefined || frame.functionName === '(idle)' || frame.functionName === '(program)') return
    busy += us
    const owner = ownerOf(frame.url, frame.functionName)
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + us)
    const where = frame.url === '' ? '' : ` ${path.basename(frame.url)}:${frame.lineNumber + 1}`
    const name = `${frame.functionName === '' ? '(anonymous)' : frame.functionName}${where}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + us)
  })
  return {
    wallMs: Math.round((profile.endTime - profile.startTime) / 1000),
    busyMs: Math.round(busy / 1000),
    owners: ranked(byOwner, busy, top),
    functions: ranked(byFunction, busy, top)
  }
}

const [where, top, fromMs, untilMs] = process.argv.slice(2)
if (where !== undefined) {
  const files = where.endsWith('.cpuprofile')
    ? [where]
    : (await readdir(where)).filter((f) => f.endsWith('.cpuprofile')).sort().map((f) => path.join(where, f))
  for (const file of files) {
    const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile
    const summary = summarise(profile, Number(top ?? 20), Number(fromMs ?? 0), untilMs === undefined ? Infinity : Number(untilMs))
    process.stdout.write(JSON.stringify({ profile: path.basename(file), ...summary }) + '\n')
  }
}
