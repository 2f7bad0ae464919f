// DATA_DIR and everything under it: directories 0700, files 0600, on a first start and when an
// existing directory was left readable (or writable) by others.
import t from 'tap'
import { chmod, lstat, mkdir, mkdtemp, opendir, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { buildTestApp, createTestDatabase, testDatabases } from '../helper.js'
import { secureDataDir } from '../../plugins/core/data-dir.js'

/** Every path under `dir` (itself included) whose mode is not 0700 (directories) or 0600 (files). */
async function wrongModes (dir: string): Promise<string[]> {
  const wrong: string[] = []
  const pending = [dir]
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    const info = await lstat(current)
    if (info.isSymbolicLink()) continue
    const want = info.isDirectory() ? 0o700 : 0o600
    if ((info.mode & 0o7777) !== want) wrong.push(`${(info.mode & 0o7777).toString(8)} ${current}`)
    if (info.isDirectory()) for await (const entry of await opendir(current)) pending.push(path.join(current, entry.name))
  }
  return wrong
}

async function loosen (dir: string): Promise<void> {
  const pending = [dir]
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    const info = await lstat(current)
    await chmod(current, info.isDirectory() ? 0o777 : 0o666)
    if (info.isDirectory()) for (const name of await readdir(current)) pending.push(path.join(current, name))
  }
}

for (const database of testDatabases) {
  t.test(`an existing data directory is repaired on start (${database})`, async (t) => {
    const db = await createTestDatabase(t, database, { migrated: true })
    const dataDir = db.env.DATA_DIR as string
    await mkdir(path.join(dataDir, 'git', 'github', 'repo.git', 'objects'), { recursive: true })
    await writeFile(path.join(dataDir, 'git', 'github', 'repo.git', 'HEAD'), 'ref: refs/heads/main\n')
    await writeFile(path.join(dataDir, 'orchestrator-secret.key'), 'x'.repeat(44))
    await loosen(dataDir)
    t.not((await wrongModes(dataDir)).length, 0, 'the directory starts loose')
    const app = await buildTestApp(t, { database: db })
    t.same(await wrongModes(dataDir), [], 'every directory is 0700 and every file 0600')
    await app.close()
    t.same(await wrongModes(dataDir), [], 'still after closing')
  })
}

t.test('a first start of the embedded database makes its files 0600 in 0700 directories', async (t) => {
  const dataDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'netauto-first-')), 'data')
  t.teardown(async () => { await rm(path.dirname(dataDir), { recursive: true, force: true }) })
  const app = await buildTestApp(t, { database: { kind: 'embedded', env: { DATA_DIR: dataDir } } })
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200)
  t.same(await wrongModes(dataDir), [], 'nothing readable by others')
  t.ok((await readdir(path.join(dataDir, 'pgdata'))).includes('PG_VERSION'), 'the database was created')
})

t.test('links inside the data directory are not followed', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'netauto-links-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const outside = path.join(root, 'outside.txt')
  await writeFile(outside, 'shared')
  await chmod(outside, 0o644)
  const dataDir = path.join(root, 'data')
  await mkdir(dataDir)
  await symlink(outside, path.join(dataDir, 'link'))
  await secureDataDir(dataDir)
  t.equal((await lstat(outside)).mode & 0o777, 0o644, 'the file a link points to keeps its mode')
  t.equal((await lstat(dataDir)).mode & 0o777, 0o700)
})
