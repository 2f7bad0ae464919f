import t, { type Test } from 'tap'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { CacheBudget } from '../../../plugins/git/cache-budget.js'

const KiB = 1024

async function fixture (t: Test): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'cache-budget-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  return root
}

/** A cache directory holding one pack of `kib` KiB. */
async function makeCache (gitdir: string, kib: number): Promise<void> {
  await mkdir(path.join(gitdir, 'objects', 'pack'), { recursive: true })
  await writeFile(path.join(gitdir, 'objects', 'pack', 'pack-x.pack'), Buffer.alloc(kib * KiB))
}
const present = async (root: string): Promise<string[]> => (await readdir(path.join(root, 'p')).catch(() => [])).sort()

t.test('a cache in use is never evicted, whatever the budget; it goes once no longer used', async (t) => {
  const root = await fixture(t)
  const evicted: string[] = []
  const budget = new CacheBudget(root, { maxBytes: 100 * KiB, maxRepositories: 10, onEvict: (g) => { evicted.push(path.basename(g)) } })
  const a = path.join(root, 'p', 'a.git')
  const b = path.join(root, 'p', 'b.git')
  await budget.use(a, async () => { await makeCache(a, 80) })
  await budget.use(a, async () => {
    // b is made and released while a, the least recently used, is in use: over budget, and b is
    // the only one that may go.
    await budget.use(b, async () => { await makeCache(b, 80) })
    t.same(await present(root), ['a.git'], 'the cache not in use went, the one in use stayed')
  })
  t.same(evicted, ['b.git'])
  t.same(await present(root), ['a.git'], 'alone it fits')
  t.same(budget.usage.repositories, 1)
})

t.test('past the count, the least recently used goes; caches of an earlier run count, oldest first, and leftovers are removed', async (t) => {
  const root = await fixture(t)
  await makeCache(path.join(root, 'p', 'old.git'), 1)
  await mkdir(path.join(root, 'p', 'half-made.git.0a1b2c.tmp'), { recursive: true })
  await writeFile(path.join(root, 'p', 'old.git', 'objects', 'pack', 'incoming-0a1b2c.pack.tmp'), Buffer.alloc(10 * KiB))
  const budget = new CacheBudget(root, { maxBytes: 10_000 * KiB, maxRepositories: 2 })
  const use = async (name: string): Promise<void> => { await budget.use(path.join(root, 'p', name), async () => { await makeCache(path.join(root, 'p', name), 1) }) }
  await use('x.git')
  t.same(await present(root), ['old.git', 'x.git'], 'the leftover side directory removed')
  t.same(await readdir(path.join(root, 'p', 'old.git', 'objects', 'pack')), ['pack-x.pack'], 'the partial pack removed')
  await use('y.git')
  t.same(await present(root), ['x.git', 'y.git'], 'the cache of the earlier run went first')
  await use('x.git')
  await use('z.git')
  t.same(await present(root), ['x.git', 'z.git'], 'then the least recently used')
})

t.test('a cache that is never made on disk is not counted', async (t) => {
  const root = await fixture(t)
  const budget = new CacheBudget(root, { maxBytes: 10_000 * KiB, maxRepositories: 1 })
  await budget.use(path.join(root, 'p', 'unknown.git'), async () => {})
  t.same(budget.usage, { bytes: 0, repositories: 0 })
})
