// The embedded database's VACUUM and ANALYZE at 100,000 component groups (the data of lists.ts),
// each round after a ninth of them were updated (the pass is due past 1,000 + 10%): how long a pass takes, and how long a read issued
// during it waits. Baseline, in alternate rounds: one VACUUM (ANALYZE) of the whole database,
// the one statement a read would otherwise wait behind. Ratio: the longest wait of a read during
// a pass over that statement's duration (lower is better).
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { migrate, openDatabase, type Db } from '../plugins/database/index.js'
import type { MaintenancePass } from '../plugins/database/embedded-maintenance.js'
import { loadConfig } from '../plugins/core/config.js'
import { median, report } from './measure.js'

const GROUPS = 100_000
const TEAMS = 5_000
const ROUNDS = 3
const PROBE_GAP_MS = 20

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** Reads one group by id every PROBE_GAP_MS until `until` resolves; the wait of each read. */
async function probe (db: Db, until: Promise<unknown>): Promise<number[]> {
  let done = false
  void until.finally(() => { done = true })
  const waits: number[] = []
  for (let i = 1; !done; i++) {
    const started = performance.now()
    await db.query('SELECT id, name FROM component_groups WHERE id = $1', [(i % GROUPS + 1).toString(16).padStart(24, '0')])
    waits.push(performance.now() - started)
    await sleep(PROBE_GAP_MS)
  }
  return waits
}

export async function embeddedMaintenance (): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-maintenance-'))
  const passes: MaintenancePass[] = []
  const db = await openDatabase(loadConfig({ DATA_DIR: dataDir }), { onMaintenance: (pass) => { passes.push(pass) } })
  try {
    const maintenance = db.maintenance
    if (maintenance === undefined) throw new Error('the embedded database has no maintenance')
    await migrate(db)
    await db.query(`INSERT INTO component_groups (id, name, gbac_read, doc)
      SELECT lpad(to_hex(g), 24, '0'), 'Group ' || g,
        CASE WHEN g % 10000 = 0 THEN '{}'::text[] ELSE ARRAY['team-' || (g % ${TEAMS})] END,
        '{"description":"A group of the benchmark","members":[{"path":["Network","Core"],"type":"folder"}],"meta":{}}'
      FROM generate_series(1, ${GROUPS}) AS g`)
    await maintenance.settled()
    const update = async (round: number): Promise<void> => {
      await db.query(`UPDATE component_groups SET version = version + 1, updated_at = now(),
          gbac_read = ARRAY['team-' || ((substr(name, 7)::int + $1::int) % ${TEAMS})]
        WHERE substr(name, 7)::int % 9 = $1::int % 9`, [round])
    }
    const pass: Array<{ passMs: number, longestStepMs: number, maxWaitMs: number, medianWaitMs: number }> = []
    const whole: number[] = []
    for (let round = 1; round <= ROUNDS * 2; round++) {
      if (round % 2 === 1) {
        const before = passes.length
        await update(round)
        const waits = await probe(db, maintenance.settled())
        const done = passes.at(-1)
        if (done === undefined || passes.length !== before + 1 || done.error !== undefined) throw new Error(`no pass after round ${round}`)
        pass.push({ passMs: done.durationMs, longestStepMs: done.longestStepMs, maxWaitMs: Math.max(...waits), medianWaitMs: median(waits) })
      } else {
        await update(round)
        const started = performance.now()
        await db.exec('VACUUM (ANALYZE)')
        whole.push(performance.now() - started)
        await maintenance.settled()
      }
    }
    const round1 = (n: number): number => Math.round(n)
    const maxWait = median(pass.map((p) => p.maxWaitMs))
    const baseline = median(whole)
    report({
      scenario: 'embedded-maintenance-100k',
      groups: GROUPS,
      updated: Math.round(GROUPS / 9),
      target: 'ratio < 1 (a read waits for one statement of a pass, not the whole database)',
      passMs: pass.map((p) => round1(p.passMs)),
      longestStepMs: pass.map((p) => round1(p.longestStepMs)),
      readMaxWaitMs: pass.map((p) => round1(p.maxWaitMs)),
      readMedianWaitMs: pass.map((p) => Number(p.medianWaitMs.toFixed(2))),
      vacuumAnalyzeWholeMs: whole.map(round1),
      ratio: Number((maxWait / baseline).toFixed(3))
    })
  } finally {
    await db.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}
