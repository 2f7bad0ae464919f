import t from 'tap'
import git from 'isomorphic-git'
import fs from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gitCli } from '../../fixtures/git-server.js'
import { addFileToTree, findInTree, replaceFileInTree, type TreeStore } from '../../../lib/git/tree.js'

// A real object database: the trees are read and written by isomorphic-git, checked by the git CLI.
const gitdir = await mkdtemp(path.join(os.tmpdir(), 'git-tree-test-'))
t.teardown(async () => { await rm(gitdir, { recursive: true, force: true }) })
await git.init({ fs, dir: gitdir, bare: true })

const reads: string[] = []
const store: TreeStore = {
  readTree: async (oid) => {
    reads.push(oid)
    return (await git.readTree({ fs, gitdir, oid })).tree
  },
  writeTree: async (tree) => await git.writeTree({ fs, gitdir, tree })
}
const blob = async (text: string): Promise<string> => await git.writeBlob({ fs, gitdir, blob: Buffer.from(text) })
const lsTree = async (tree: string): Promise<string[]> =>
  (await gitCli(['--git-dir', gitdir, 'ls-tree', '-r', '-t', '--format=%(objecttype) %(path)', tree])).trim().split('\n')

async function added (root: string | undefined, filePath: string, oid: string): Promise<{ tree: string, written: string[] }> {
  const result = await addFileToTree(store, root, filePath, oid)
  if (!result.ok) throw new Error(result.conflict)
  return result
}

const one = await blob('{"one":1}\n')
const two = await blob('{"two":2}\n')

t.test('builds trees from nothing (a first commit)', async (t) => {
  const { tree, written } = await added(undefined, 'a/b/c.json', one)
  t.same(await lsTree(tree), ['tree a', 'tree a/b', 'blob a/b/c.json'])
  t.equal(written.length, 3, 'one tree per directory level')
  t.equal(written[written.length - 1], tree, 'the root comes last')
  t.equal((await gitCli(['--git-dir', gitdir, 'cat-file', '-p', `${tree}:a/b/c.json`])), '{"one":1}\n')
})

t.test('touches only the trees on the path; siblings keep their objects; git order is kept', async (t) => {
  let { tree: root } = await added(undefined, 'x/keep/deep.json', one)
  root = (await added(root, 'x/y.json', one)).tree
  root = (await added(root, 'x-y.json', one)).tree // git sorts it before the tree 'x' ('-' < '/')
  const keep = (await gitCli(['--git-dir', gitdir, 'rev-parse', `${root}:x/keep`])).trim()
  reads.length = 0
  const { tree, written } = await added(root, 'x/new/file.json', two)
  t.equal(reads.length, 2, 'read the root and x only')
  t.equal(written.length, 3, 'wrote x/new, x and the root')
  t.equal((await gitCli(['--git-dir', gitdir, 'rev-parse', `${tree}:x/keep`])).trim(), keep, 'untouched subtree reused')
  t.same(await lsTree(tree), ['blob x-y.json', 'tree x', 'tree x/keep', 'blob x/keep/deep.json', 'tree x/new', 'blob x/new/file.json', 'blob x/y.json'])
  // fsck checks tree entry order among other things.
  const commit = await git.writeCommit({
    fs, gitdir, commit: { message: 'm\n', tree, parent: [], author: { name: 'a', email: 'a@b', timestamp: 0, timezoneOffset: 0 }, committer: { name: 'a', email: 'a@b', timestamp: 0, timezoneOffset: 0 } }
  })
  t.equal((await gitCli(['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling', commit])).trim(), '')
})

t.test('a taken path is a conflict, found before anything is written', async (t) => {
  const { tree: root } = await added(undefined, 'projects/a.json', one)
  const withLink = await git.writeTree({
    fs, gitdir, tree: [...(await git.readTree({ fs, gitdir, oid: root })).tree, { mode: '160000', path: 'vendor', oid: one.replace(/^./, 'f'), type: 'commit' }]
  })
  const cases: Array<[string, string]> = [
    ['projects/a.json', 'projects/a.json already exists'],
    ['projects', 'projects already exists as a directory'],
    ['projects/a.json/b.json', 'projects/a.json already exists and is not a directory'],
    ['vendor/x.json', 'vendor already exists and is not a directory']
  ]
  for (const [filePath, conflict] of cases) {
    let writes = 0
    const counting: TreeStore = { readTree: store.readTree, writeTree: async (tree) => { writes++; return await store.writeTree(tree) } }
    t.same(await addFileToTree(counting, withLink, filePath, two), { ok: false, conflict }, filePath)
    t.equal(writes, 0, `${filePath}: nothing written`)
  }
})

t.test('replacing a file touches only the trees on its path and keeps its mode', async (t) => {
  const { tree: base } = await added(undefined, 'a/b/c.json', one)
  const { tree: root } = await added(base, 'a/keep.json', one)
  const executable = await git.writeTree({ fs, gitdir, tree: [...(await git.readTree({ fs, gitdir, oid: root })).tree, { mode: '100755', path: 'run.sh', oid: one, type: 'blob' }] })
  const replaced = await replaceFileInTree(store, executable, 'a/b/c.json', two)
  t.ok(replaced.ok && !('unchanged' in replaced))
  if (!replaced.ok || 'unchanged' in replaced) return
  t.equal(replaced.previous, one, 'the blob it held')
  t.equal(replaced.written.length, 3, 'a/b, a and the root')
  t.equal((await gitCli(['--git-dir', gitdir, 'rev-parse', `${replaced.tree}:a/b/c.json`])).trim(), two)
  t.equal((await gitCli(['--git-dir', gitdir, 'rev-parse', `${replaced.tree}:a/keep.json`])).trim(), one, 'siblings kept')
  const script = await replaceFileInTree(store, executable, 'run.sh', two)
  t.ok(script.ok && !('unchanged' in script))
  if (script.ok && !('unchanged' in script)) {
    t.match(await gitCli(['--git-dir', gitdir, 'ls-tree', script.tree, 'run.sh']), /^100755 blob/, 'an executable stays executable')
  }
  let writes = 0
  const counting: TreeStore = { readTree: store.readTree, writeTree: async (tree) => { writes++; return await store.writeTree(tree) } }
  t.same(await replaceFileInTree(counting, executable, 'a/b/c.json', one), { ok: true, unchanged: true, previous: one }, 'same content')
  t.equal(writes, 0, 'nothing written when unchanged')
})

t.test('replacing or finding what is not a file says what is missing', async (t) => {
  const { tree: root } = await added(undefined, 'a/b.json', one)
  const withLink = await git.writeTree({
    fs, gitdir, tree: [...(await git.readTree({ fs, gitdir, oid: root })).tree, { mode: '120000', path: 'link', oid: one, type: 'blob' }]
  })
  const cases: Array<[string, string]> = [
    ['x.json', 'x.json'],
    ['a/x.json', 'a/x.json'],
    ['a', 'a (a directory, not a file)'],
    ['a/b.json/c', 'a/b.json/c (a/b.json is not a directory)'],
    ['link', 'link (a symbolic link, not a file)']
  ]
  for (const [filePath, missing] of cases) {
    t.same(await replaceFileInTree(store, withLink, filePath, two), { ok: false, missing }, filePath)
  }
  t.same(await findInTree(store, withLink, 'a/b.json'), { ok: true, entry: { mode: '100644', path: 'b.json', oid: one, type: 'blob' } })
  t.same(await findInTree(store, withLink, 'a/x'), { ok: false, missing: 'a/x' })
  t.same(await findInTree(store, withLink, 'a/b.json/c'), { ok: false, missing: 'a/b.json/c (a/b.json is not a directory)' })
  const dir = await findInTree(store, withLink, 'a')
  t.ok(dir.ok && dir.entry.type === 'tree', 'a directory is found as a tree')
})
