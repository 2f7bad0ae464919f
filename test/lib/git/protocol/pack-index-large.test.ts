// A large object through the pack index: hashed as it inflates, never held whole, the event loop
// free meanwhile. Apart from pack-index.test.ts because it builds, deflates and indexes 192 MiB
// (about 20 s on a busy two-core machine): \`npm test\` runs it, the quick lane does not.
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { indexPack, objectId } from '../../../../lib/git/protocol/pack-index.js'
import { gitIndexIn, makePack } from './pack-builders.js'

const work = await mkdtemp(path.join(os.tmpdir(), 'pack-index-large-'))
t.teardown(async () => { await rm(work, { recursive: true, force: true }) })
const gitIndex = async (pack: Buffer): Promise<Buffer> => await gitIndexIn(work, pack)

t.test('a large object is hashed as it inflates: never held, the event loop free meanwhile', async (t) => {
  // 192 MiB that deflate to about 200 KiB: large beside what a collector may leave uncollected of
  // the pieces inflated (tens of MiB, the process's memory is what is measured).
  const line = Buffer.from('{"device": "r1", "state": "up"}\n')
  const big = Buffer.alloc(192 * 1024 * 1024)
  for (let o = 0; o < big.length; o += line.length) line.copy(big, o)
  const small = Buffer.from('small\n')
  const pack = makePack([{ type: 3, data: big }, { type: 3, data: small }])
  const oids = [objectId('blob', big).toString('hex'), objectId('blob', small).toString('hex')]
  const expected = await gitIndex(pack)
  t.ok(pack.length < 1024 * 1024, `a pack of ${pack.length} bytes`)

  const usage = (): number => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers }
  global.gc?.()
  const before = usage()
  let peak = before
  let turns = 0
  let done = false
  const tick = (): void => {
    turns++
    peak = Math.max(peak, usage())
    if (!done) setImmediate(tick)
  }
  setImmediate(tick)
  const index = await indexPack(pack, { maxHeldBytes: 4 * 1024 * 1024 })
  done = true
  t.same(index.oids, oids)
  t.ok(index.idx.equals(expected), 'the index git writes')
  t.ok(turns > 100, `${turns} turns of the event loop while 192 MiB inflated`)
  // Before, the object was inflated whole in one call: 192 MiB at once.
  t.ok(peak - before < 96 * 1024 * 1024, `memory grew by ${Math.round((peak - before) / 1048576)} MiB at most, not by the object`)
})
