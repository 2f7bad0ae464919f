import t from 'tap'
import fc from 'fast-check'
import { createHash } from 'node:crypto'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gitCli } from '../../../fixtures/git-server.js'
import { PackError, PackTooLarge, applyDelta, indexPack, objectId, type PackSource } from '../../../../lib/git/protocol/pack-index.js'
import { propertyRuns } from '../../../helpers/property-runs.js'
import { gitIndexIn, makePack } from './pack-builders.js'

const work = await mkdtemp(path.join(os.tmpdir(), 'pack-index-'))
t.teardown(async () => { await rm(work, { recursive: true, force: true }) })
const gitIndex = async (pack: Buffer): Promise<Buffer> => await gitIndexIn(work, pack)

/** Runs git with `input` on stdin and returns its stdout. */
async function gitWithInput (args: string[], input: Buffer, cwd: string): Promise<Buffer> {
  const child = spawn('git', args, { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } })
  const out: Buffer[] = []
  let err = ''
  child.stdout.on('data', (c: Buffer) => out.push(c))
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  child.stdin.end(input)
  const [code] = await once(child, 'close') as [number | null]
  if (code !== 0) throw new Error(`git ${args.join(' ')} failed: ${err}`)
  return Buffer.concat(out)
}

/** A repository with similar files changed over commits, so its packs hold chains of deltas. */
async function repoWithHistory (): Promise<string> {
  const dir = path.join(work, 'repo')
  await gitCli(['init', '-q', '--initial-branch=main', dir])
  for (let c = 0; c < 6; c++) {
    for (let f = 0; f < 30; f++) {
      await mkdir(path.join(dir, `d${f % 3}`), { recursive: true })
      const lines = Array.from({ length: 40 }, (_, l) => `line ${l} of file ${f}${l === c ? ` changed in ${c}` : ''}`)
      await writeFile(path.join(dir, `d${f % 3}`, `f${f}.txt`), lines.join('\n') + '\n')
    }
    await gitCli(['add', '-A'], { cwd: dir })
    await gitCli(['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', `commit ${c}`], { cwd: dir })
  }
  return dir
}

const repo = await repoWithHistory()
const revs = Buffer.from('main\n')
// With --delta-base-offset the deltas name their base by distance (what fetches get); without, by id.
const ofsPack = await gitWithInput(['pack-objects', '--stdout', '--revs', '--delta-base-offset', '--depth=50'], revs, repo)
const refPack = await gitWithInput(['pack-objects', '--stdout', '--revs', '--depth=50'], revs, repo)

/** A delta that rebuilds `target` from `base`: a copy of the base's first `keep` bytes, then an insert. */
function makeDelta (base: Buffer, target: Buffer, keep: number): Buffer {
  const varint = (n: number): number[] => {
    const out: number[] = []
    do { out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0)); n = Math.floor(n / 128) } while (n > 0)
    return out
  }
  const ops: number[] = [...varint(base.length), ...varint(target.length)]
  if (keep > 0) ops.push(0x80 | 0x01 | 0x10, 0, keep)
  const rest = target.subarray(keep)
  for (let i = 0; i < rest.length; i += 127) {
    const chunk = rest.subarray(i, i + 127)
    ops.push(chunk.length, ...chunk)
  }
  return Buffer.from(ops)
}

t.test('the index is byte for byte the one git index-pack writes', async (t) => {
  for (const [name, pack] of [['offset deltas', ofsPack], ['id deltas', refPack]] as const) {
    const ours = await indexPack(pack)
    t.ok(ours.idx.equals(await gitIndex(pack)), name)
    t.equal(ours.packSha, pack.subarray(-20).toString('hex'))
  }
  const listed = (await gitCli(['rev-list', '--objects', 'main'], { cwd: repo })).split('\n').filter(Boolean).map((l) => l.slice(0, 40))
  t.same(new Set((await indexPack(ofsPack)).oids), new Set(listed), 'every object of the history, each once')
})

/** A zlib stream of `data` after `empty` empty stored blocks: valid, and 5 bytes longer per block. */
function paddedZlib (data: Buffer, empty: number): Buffer {
  let a = 1
  let b = 0
  for (const byte of data) {
    a = (a + byte) % 65521
    b = (b + a) % 65521
  }
  const length = Buffer.alloc(4)
  length.writeUInt16LE(data.length, 0)
  length.writeUInt16LE(~data.length & 0xffff, 2)
  const adler = Buffer.alloc(4)
  adler.writeUInt32BE(((b << 16) | a) >>> 0)
  const block = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff])
  return Buffer.concat([Buffer.from([0x78, 0x01]), ...Array<Buffer>(empty).fill(block), Buffer.from([0x01]), length, data, adler])
}

/** A pack read as from a file: each read a copy, and counted, so nothing holds the pack whole. */
function copyingSource (pack: Buffer): PackSource & { largestRead: number } {
  const source = {
    size: pack.length,
    largestRead: 0,
    read: (position: number, length: number): Buffer => {
      const out = Buffer.from(pack.subarray(position, position + length))
      source.largestRead = Math.max(source.largestRead, out.length)
      return out
    }
  }
  return source
}

t.test('a pack read a window at a time (as from a file) gives the same index', async (t) => {
  for (const [name, pack] of [['offset deltas', ofsPack], ['id deltas', refPack]] as const) {
    const whole = await indexPack(pack)
    for (const windowBytes of [7, 4096]) {
      const source = copyingSource(pack)
      const windowed = await indexPack(source, { windowBytes })
      t.ok(windowed.idx.equals(whole.idx), `${name}, windows of ${windowBytes} bytes`)
      t.same(windowed.oids, whole.oids)
      t.ok(source.largestRead < pack.length / 2, `${name}: largest read ${source.largestRead} of a ${pack.length}-byte pack`)
    }
  }
  // An object whose deflated stream is far longer than its data (empty stored blocks before it):
  // the window is widened until the stream ends.
  const data = Buffer.from('short\n')
  const stored = makePack([{ type: 3, data, deflated: paddedZlib(data, 2000) }, { type: 3, data: Buffer.from('next\n') }])
  t.ok((await indexPack(copyingSource(stored), { windowBytes: 16 })).idx.equals((await indexPack(stored)).idx), 'a stream past the first window')
  await t.rejects(indexPack(copyingSource(Buffer.concat([ofsPack.subarray(0, -1), Buffer.from([ofsPack.at(-1) as number ^ 1])])), { windowBytes: 64 }),
    PackError, 'the checksum checked from a source too')
})

t.test('a delta on an object later in the pack, and one on a delta, are resolved', async (t) => {
  const a = Buffer.from('first version of a file\n'.repeat(20))
  const b = Buffer.concat([a.subarray(0, 200), Buffer.from('second version\n')])
  const c = Buffer.concat([b.subarray(0, 100), Buffer.from('third version\n')])
  const idOf = (data: Buffer): Buffer => objectId('blob', data)
  const pack = makePack([
    { type: 7, extra: idOf(b), data: makeDelta(b, c, 100) }, // c on b, which comes after
    { type: 7, extra: idOf(a), data: makeDelta(a, b, 200) }, // b on a, which comes after too
    { type: 3, data: a }
  ])
  const ours = await indexPack(pack)
  t.same(ours.oids, [idOf(c), idOf(b), idOf(a)].map((o) => o.toString('hex')))
  t.ok(ours.idx.equals(await gitIndex(pack)))
})

t.test('applyDelta: builds the target, and refuses a delta that reaches outside', async (t) => {
  const base = Buffer.from('0123456789abcdef')
  t.equal(applyDelta(makeDelta(base, Buffer.from('0123xyz'), 4), base).toString(), '0123xyz')
  t.throws(() => applyDelta(makeDelta(base, Buffer.from('0123'), 4), Buffer.from('short')), PackError, 'base of another size')
  t.throws(() => applyDelta(Buffer.from([16, 4, 0x91, 10, 10]), base), PackError, 'copy past the base')
  t.throws(() => applyDelta(Buffer.from([16, 2, 3, 65, 66, 67]), base), PackError, 'insert past the stated size')
  t.throws(() => applyDelta(Buffer.from([16, 5, 2, 65, 66]), base), PackError, 'fewer bytes than stated')
  t.throws(() => applyDelta(Buffer.from([16, 1, 0]), base), PackError, 'reserved instruction')
  t.throws(() => applyDelta(Buffer.from([16, 0xff, 0xff, 0xff, 0x7f]), base, 1000), PackTooLarge, 'too large')
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ maxLength: 64 }), (delta, b) => {
    try {
      const out = applyDelta(delta, b, 4096)
      return out.length <= 4096
    } catch (err) {
      return err instanceof PackError || err instanceof PackTooLarge
    }
  }), { numRuns: propertyRuns(400) })
})

t.test('a hostile pack is refused with a PackError, never another failure', async (t) => {
  await t.rejects(indexPack(Buffer.from('PACK')), PackError, 'too short')
  await t.rejects(indexPack(Buffer.concat([ofsPack.subarray(0, -1), Buffer.from([ofsPack.at(-1) as number ^ 1])])), PackError, 'checksum')
  const blob = Buffer.from('hello\n')
  await t.rejects(indexPack(makePack([{ type: 3, data: blob, size: 7 }])), PackError, 'size unlike the header')
  await t.rejects(indexPack(makePack([{ type: 3, data: Buffer.alloc(10_000), size: 10_000 }]), { maxObjectBytes: 1000 }), PackTooLarge, 'past the limit')
  await t.rejects(indexPack(makePack([{ type: 5, data: blob }])), PackError, 'unknown type')
  await t.rejects(indexPack(makePack([{ type: 7, extra: Buffer.alloc(20, 1), data: makeDelta(blob, blob, 6) }])), PackError, 'base not in the pack')
  await t.rejects(indexPack(makePack([{ type: 6, extra: Buffer.from([5]), data: makeDelta(blob, blob, 6) }])), PackError, 'offset to no object')
  // Every byte of a real pack changed at random (the checksum made right again, so it is read through).
  await fc.assert(fc.asyncProperty(
    fc.array(fc.tuple(fc.nat({ max: ofsPack.length - 21 }), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
    async (changes) => {
      const body = Buffer.from(ofsPack.subarray(0, -20))
      for (const [at, xor] of changes) body[at] = (body[at] as number) ^ xor
      const pack = Buffer.concat([body, createHash('sha1').update(body).digest()])
      try {
        const { idx } = await indexPack(pack, { maxObjectBytes: 1 << 20 })
        return idx.length > 0
      } catch (err) {
        return err instanceof PackError || err instanceof PackTooLarge
      }
    }), { numRuns: propertyRuns(60) })
})

t.test('a large pack gives the event loop turns while it is indexed', async (t) => {
  let turns = 0
  let done = false
  const tick = (): void => {
    turns++
    if (!done) setImmediate(tick)
  }
  setImmediate(tick)
  const { oids } = await indexPack(ofsPack, { sliceMs: 0 })
  done = true
  t.ok(turns >= oids.length / 2, `${turns} turns while ${oids.length} objects were indexed`)
})

t.test('a delta building more than is held is hashed as it is built; one needing a larger base held is refused', async (t) => {
  const base = Buffer.alloc(64 * 1024, 0x61)
  const baseOid = objectId('blob', base)
  // Source 64 KiB, target 4 MiB, then 64 copies of the whole base (an op of 0x80: offset 0, size 0x10000).
  const delta = Buffer.from([0x80, 0x80, 0x04, 0x80, 0x80, 0x80, 0x02, ...Array.from({ length: 64 }, () => 0x80)])
  const target = Buffer.concat(Array.from({ length: 64 }, () => base))
  const targetOid = objectId('blob', target)
  const pack = makePack([{ type: 3, data: base }, { type: 7, extra: baseOid, data: delta }])
  const index = await indexPack(pack, { maxHeldBytes: 1024 * 1024 })
  t.same(index.oids, [baseOid.toString('hex'), targetOid.toString('hex')])
  t.ok(index.idx.equals(await gitIndex(pack)), 'the index git writes')
  t.ok(index.idx.equals((await indexPack(pack)).idx), 'as when the object is held')

  // A delta on that 4 MiB object (16 bytes copied from it) needs it whole: refused past the bound.
  const onTarget = Buffer.from([0x80, 0x80, 0x80, 0x02, 0x10, 0x90, 0x10])
  const chained = makePack([{ type: 3, data: base }, { type: 7, extra: baseOid, data: delta }, { type: 7, extra: targetOid, data: onTarget }])
  await t.rejects(indexPack(chained, { maxHeldBytes: 1024 * 1024 }), PackTooLarge, 'a base past maxHeldBytes')
  t.equal((await indexPack(chained, { maxHeldBytes: 8 * 1024 * 1024 })).oids.length, 3, 'within the bound, built')
  await t.rejects(indexPack(chained, { maxInflatedBytes: 4 * 1024 * 1024 }), PackTooLarge, 'past the work of one pack')
})
