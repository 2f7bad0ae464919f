// Reading blobs of a cache with their size read first: loose and packed, whole and as deltas,
// as git itself reads them; past the limit refused before they are inflated.
import t from 'tap'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gitCli } from '../../fixtures/git-server.js'
import { BlobTooLarge, blobReader } from '../../../plugins/git/blobs.js'

const MiB = 1024 * 1024
const work = await mkdtemp(path.join(os.tmpdir(), 'blobs-'))
t.teardown(async () => { await rm(work, { recursive: true, force: true }) })
await gitCli(['init', '-q', '--initial-branch=main', work])
const gitdir = path.join(work, '.git')
const commit = async (message: string): Promise<void> => {
  await gitCli(['add', '-A'], { cwd: work })
  await gitCli(['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', message], { cwd: work })
}
// Similar files changed over commits: packed, most become deltas of one another.
for (let c = 0; c < 4; c++) {
  for (let f = 0; f < 6; f++) {
    const lines = Array.from({ length: 2000 }, (_, l) => `line ${l} of file ${f}${l === c * 7 ? ` changed in ${c}` : ''}`)
    await writeFile(path.join(work, `f${f}.txt`), lines.join('\n') + '\n')
  }
  await commit(`commit ${c}`)
}
await gitCli(['repack', '-adq', '--depth=20', '--window=20'], { cwd: work })
// One loose object beside the pack.
await writeFile(path.join(work, 'loose.json'), '{"loose": true}\n')
const looseOid = (await gitCli(['hash-object', '-w', 'loose.json'], { cwd: work })).trim()

const blobs = (await gitCli(['cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], { cwd: work }))
  .trim().split('\n').map((l) => l.split(' ')).filter(([, type]) => type === 'blob').map(([oid, , size]) => ({ oid: oid as string, size: Number(size) }))

t.test('every blob reads as git reads it: loose, packed whole, and packed as a delta', async (t) => {
  const packDir = path.join(gitdir, 'objects', 'pack')
  const idx = (await readdir(packDir)).find((f) => f.endsWith('.idx')) as string
  // verify-pack lists a delta with its depth and base after its sizes.
  const deltas = (await gitCli(['verify-pack', '-v', path.join(packDir, idx)], { cwd: work })).split('\n').filter((l) => / blob +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(l))
  t.ok(deltas.length > 5, `${deltas.length} blobs stored as deltas`)
  t.ok(blobs.length > 20, `${blobs.length} blobs`)
  t.ok(blobs.some((b) => b.oid === looseOid), 'one of them loose')
  const reader = blobReader(gitdir, {})
  for (const { oid, size } of blobs) {
    const expected = Buffer.from(await gitCli(['cat-file', 'blob', oid], { cwd: work }), 'utf8')
    const content = await reader.read(oid, size)
    if (!content.equals(expected)) t.fail(`blob ${oid} differs`)
  }
  t.pass('all equal')
})

t.test('a blob one byte past the limit is refused, loose or packed, delta or not', async (t) => {
  const reader = blobReader(gitdir, {})
  for (const { oid, size } of blobs) {
    await t.rejects(reader.read(oid, size - 1), BlobTooLarge, `${oid} at ${size - 1}`)
  }
  await t.rejects(reader.read('0'.repeat(40), MiB), /not in the cache/)
})

t.test('a huge loose object is refused from its header, nothing inflated past it', async (t) => {
  const line = Buffer.from('{"device": "r1", "state": "up"}\n')
  const big = Buffer.alloc(48 * MiB)
  for (let o = 0; o < big.length; o += line.length) line.copy(big, o)
  await writeFile(path.join(work, 'big.json'), big)
  const oid = (await gitCli(['hash-object', '-w', 'big.json'], { cwd: work })).trim()
  const usage = (): number => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers }
  global.gc?.()
  const before = usage()
  const refusal = await blobReader(gitdir, {}).read(oid, 8 * MiB).then(() => undefined, (err: unknown) => err)
  t.ok(refusal instanceof BlobTooLarge && refusal.description === `a file of ${48 * MiB} bytes`, 'refused, naming its size')
  t.ok(usage() - before < 16 * MiB, 'memory grew by far less than the object')
  t.equal((await blobReader(gitdir, {}).read(oid, 48 * MiB)).length, 48 * MiB, 'read whole within a limit that allows it')
})
