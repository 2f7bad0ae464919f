import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { commitContent, gitObject, packOf, treeContent } from '../../../../lib/git/protocol/objects.js'
import { gitCli } from '../../../fixtures/git-server.js'

const author = { name: 'ann', email: 'ann@example.com', timestamp: 1_700_000_000, timezoneOffset: 0 }

t.test('an object id is the SHA-1 git gives it', async (t) => {
  t.equal(gitObject('blob', Buffer.from('hello\n')).oid, 'ce013625030ba8dba906f756967f9e9ca394464a', 'git hash-object of "hello\\n"')
  t.equal(gitObject('tree', Buffer.alloc(0)).oid, '4b825dc642cb6eb9a060e54bf8d69288fbee4904', 'the empty tree')
})

t.test('an empty pack: header of no objects and its SHA-1', async (t) => {
  const pack = packOf([])
  t.equal(pack.length, 32)
  t.equal(pack.subarray(0, 12).toString('hex'), '5041434b0000000200000000')
  t.equal(pack.subarray(12).toString('hex'), '029d08823bd8a8eab510ad6ac75c823cfd3ed31e', 'the trailer git itself writes for an empty pack')
})

t.test('a commit, its trees and blobs: git indexes the pack, finds each object under our id, and fsck --strict accepts them', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'objects-test-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const gitdir = path.join(dir, 'repo.git')
  await gitCli(['init', '-q', '--bare', gitdir])

  const small = gitObject('blob', Buffer.from('{}\n'))
  // Larger than 15 bytes and than 2,047: the size takes two and three bytes of the object header.
  const medium = gitObject('blob', Buffer.from('x'.repeat(100)))
  const large = gitObject('blob', Buffer.from('y'.repeat(70_000)))
  const sub = gitObject('tree', treeContent([{ mode: '100644', path: 'site é.json', oid: medium.oid, type: 'blob' }]))
  // Git's order: 'a-' < 'a.json' < 'a/' (the directory) < 'a0'; given here out of order.
  const root = gitObject('tree', treeContent([
    { mode: '100644', path: 'a0', oid: small.oid, type: 'blob' },
    { mode: '040000', path: 'a', oid: sub.oid, type: 'tree' },
    { mode: '100755', path: 'a.json', oid: large.oid, type: 'blob' },
    { mode: '100644', path: 'a-', oid: small.oid, type: 'blob' }
  ]))
  const commit = gitObject('commit', commitContent({
    tree: root.oid, parents: [], author, committer: { ...author, timezoneOffset: -330 }, message: 'Add site\n\nWith a body.\n'
  }))
  // In the repository's pack directory, indexed by git itself (which computes every object's id).
  const pack = path.join(gitdir, 'objects', 'pack', 'pack-test.pack')
  await writeFile(pack, packOf([commit, root, sub, small, medium, large]))
  await gitCli(['--git-dir', gitdir, 'index-pack', pack])

  for (const object of [commit, root, sub, small, medium, large]) {
    t.equal((await gitCli(['--git-dir', gitdir, 'cat-file', '-t', object.oid])).trim(), object.type, `${object.type} ${object.oid} found under our id`)
  }
  await gitCli(['--git-dir', gitdir, 'update-ref', 'refs/heads/main', commit.oid])
  t.equal(await gitCli(['--git-dir', gitdir, 'fsck', '--strict', '--no-progress']), '', 'fsck --strict: sorted trees, well-formed commit')
  t.equal(await gitCli(['--git-dir', gitdir, 'ls-tree', '--name-only', 'main']), 'a-\na.json\na\na0\n', "entries in git's order")
  t.equal(await gitCli(['--git-dir', gitdir, 'log', '-1', '--format=%an <%ae> %at %ai|%cn %ci|%B', 'main']),
    'ann <ann@example.com> 1700000000 2023-11-14 22:13:20 +0000|ann 2023-11-15 03:43:20 +0530|Add site\n\nWith a body.\n\n')
  t.equal(await gitCli(['--git-dir', gitdir, 'show', 'main:a/site é.json']), 'x'.repeat(100))
  t.equal((await gitCli(['--git-dir', gitdir, 'show', 'main:a.json'])).length, 70_000)
})

t.test('a commit with a parent names it', async (t) => {
  const parent = 'a'.repeat(40)
  const content = commitContent({ tree: 'b'.repeat(40), parents: [parent], author, committer: { ...author, timezoneOffset: 60 }, message: 'm\n' })
  t.equal(content.toString(), `tree ${'b'.repeat(40)}\nparent ${parent}\nauthor ann <ann@example.com> 1700000000 +0000\n` +
    'committer ann <ann@example.com> 1700000000 -0100\n\nm\n', 'an offset west of UTC is negative')
})
