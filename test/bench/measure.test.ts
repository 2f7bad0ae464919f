import t from 'tap'
import pg from 'pg'
import { cpuTicks, medianOfPairs, pairedRounds, postgresTicks, summarise, type LoadFigures, type Runner } from '../../bench/measure.js'

const round = (rps: number, p99: number, cpuPer1k?: number): LoadFigures =>
  ({ rps, p50: p99 / 2, p99, errors: 0, non2xx: 0, ...(cpuPer1k === undefined ? {} : { cpuPer1k }) })

t.test('each round is compared with the baseline round beside it, and the median taken', async (t) => {
  // The machine slows down over the run: both drift alike, so every pair reads 0.9 while the
  // ratio of the two medians (81/100) would not.
  const candidate = [round(90, 1), round(45, 2), round(81, 1)]
  const baseline = [round(100, 1), round(50, 2), round(90, 1)]
  t.equal(medianOfPairs(candidate, baseline, (x, y) => x.rps / y.rps), 0.9)
  t.equal(medianOfPairs([round(1, 1), round(3, 1)], [round(2, 1), round(2, 1)], (x, y) => x.rps / y.rps), 1, 'even count: mean of the middle two')
})

t.test('a figure missing from any pair gives no ratio at all', async (t) => {
  const ratio = (x: LoadFigures, y: LoadFigures) => x.cpuPer1k === undefined || y.cpuPer1k === undefined ? undefined : y.cpuPer1k / x.cpuPer1k
  t.equal(medianOfPairs([round(1, 1, 10), round(1, 1, 10)], [round(1, 1, 9), round(1, 1, 8)], ratio), 0.85)
  t.equal(medianOfPairs([round(1, 1, 10), round(1, 1)], [round(1, 1, 9), round(1, 1, 8)], ratio), undefined)
  t.equal(medianOfPairs([], [], ratio), undefined)
  t.equal(medianOfPairs([round(1, 1)], [round(0, 1)], (x, y) => x.rps / y.rps), undefined, 'a division by zero is no ratio')
})

t.test('paired rounds warm both sides up, then alternate which side of a pair runs first', async (t) => {
  const calls: string[] = []
  // Each side answers with a rate that tells its call apart: the machine "slows down" over time.
  const side = (name: string): Runner => async (options) => {
    calls.push(`${name}${options.seconds}`)
    return round(1000 - calls.length, 1)
  }
  const rounds = await pairedRounds(side('A'), side('B'), { connections: 1, seconds: 2, rounds: 3, warmupRounds: 2, warmupSeconds: 1 })
  t.same(calls, ['A1', 'B1', 'A1', 'B1', 'A2', 'B2', 'B2', 'A2', 'A2', 'B2'])
  t.same(rounds.candidate.map((r) => r.rps), [995, 992, 991], 'each side keeps its own rounds, in pair order')
  t.same(rounds.baseline.map((r) => r.rps), [994, 993, 990])
  t.equal(summarise(rounds).ratio, 1.001, 'the median of 995/994, 992/993 and 991/990')
})

t.test('CPU time of a process grows as it works', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const before = cpuTicks(process.pid)
  t.type(before, 'number')
  // Busy until a tick is counted (10 ms of CPU at most, usually), or 10 s on a starved machine.
  const until = performance.now() + 10_000
  let after = before
  while (after === before && performance.now() < until) after = cpuTicks(process.pid)
  t.ok((after ?? 0) > (before ?? Infinity), 'ticks counted')
  t.equal(cpuTicks(2 ** 30), undefined, 'no such process')
})

t.test('the database CPU a request is summarised beside the process CPU, when measured', async (t) => {
  const withSide = (sideCpuPer1k: number): LoadFigures => ({ ...round(100, 1, 8), sideCpuPer1k })
  const summary = summarise({ candidate: [withSide(1.5), withSide(1.6), withSide(3)], baseline: [round(100, 1, 5), round(100, 1, 5), round(100, 1, 5)] })
  t.equal(summary.service.cpuUsPerRequest, 80)
  t.equal(summary.service.sideCpuUsPerRequest, 16, 'the median of 15, 16 and 30 us')
  t.notOk('sideCpuUsPerRequest' in summary.baseline, 'not measured: not reported')
  t.equal(summary.cpuRatio, 0.625, 'the process CPU only')
})

const serverUrl = process.env.TEST_DATABASE_URL
t.test('the PostgreSQL server CPU grows as it works', { skip: (process.platform !== 'linux' || serverUrl === undefined || serverUrl === '') && 'needs /proc and a local server' }, async (t) => {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  t.teardown(async () => { await client.end() })
  const before = postgresTicks()
  t.type(before, 'number')
  // Work for the server until a tick is counted (a few statements), or 10 s on a starved machine.
  const until = performance.now() + 10_000
  let after = before
  while (after === before && performance.now() < until) {
    await client.query('SELECT count(*) FROM generate_series(1, 200000)')
    after = postgresTicks()
  }
  t.ok((after ?? 0) > (before ?? Infinity), 'ticks counted')
})
