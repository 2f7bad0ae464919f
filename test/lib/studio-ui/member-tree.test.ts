import t from 'tap'
import {
  addComponent, addFolder, buildTree, folderPaths, nameProblem, removeNode, renameNode, segmentsOf, type Member
} from '../../../lib/studio-ui/member-tree.js'

const members: Member[] = [
  { path: '/Network/Core/Backup', type: 'component', sourceCollection: 'automations', ref: 'r1' },
  { path: ['Network', 'Core'], type: 'folder' },
  { path: ['Lab'] },
  { path: '/Network/Edge/Check', sourceCollection: 'automations', ref: 'r2' },
  { path: '/Top', type: 'component', sourceCollection: 'templates', ref: 'r3' }
]

t.test('the tree: folders from every path, explicit or implied, folders first, by name', async (t) => {
  const tree = buildTree(members)
  t.same(tree.map((n) => [n.kind, n.name, n.member]), [['folder', 'Lab', 2], ['folder', 'Network', undefined], ['component', 'Top', 4]])
  const network = tree[1]
  t.same(network?.children.map((n) => [n.name, n.member]), [['Core', 1], ['Edge', undefined]], 'Edge is implied by a component path')
  t.same(network?.children[0]?.children.map((n) => [n.kind, n.name, n.path, n.member]), [['component', 'Backup', ['Network', 'Core', 'Backup'], 0]])
  t.same(folderPaths(tree), [[], ['Lab'], ['Network'], ['Network', 'Core'], ['Network', 'Edge']])
  t.same(buildTree([]), [])
  t.same(segmentsOf({ path: '//a//b/', sourceCollection: 's', ref: 'r' }), ['a', 'b'], 'empty segments dropped')
})

t.test('renaming a folder renames everything under it; other members stay as they were', async (t) => {
  const network = buildTree(members)[1]
  if (network === undefined) throw new Error('no Network folder')
  const renamed = renameNode(members, network, 'Backbone')
  t.same(renamed, [
    { path: '/Backbone/Core/Backup', type: 'component', sourceCollection: 'automations', ref: 'r1' },
    { path: ['Backbone', 'Core'], type: 'folder' },
    { path: ['Lab'] },
    { path: '/Backbone/Edge/Check', sourceCollection: 'automations', ref: 'r2' },
    { path: '/Top', type: 'component', sourceCollection: 'templates', ref: 'r3' }
  ], 'no type added where there was none')
  t.same(members[0], { path: '/Network/Core/Backup', type: 'component', sourceCollection: 'automations', ref: 'r1' }, 'the input unchanged')
})

t.test('renaming a component renames it alone', async (t) => {
  const top = buildTree(members)[2]
  if (top === undefined) throw new Error('no Top')
  t.same(renameNode(members, top, 'Peak')[4], { path: '/Peak', type: 'component', sourceCollection: 'templates', ref: 'r3' })
  t.same(renameNode(members, top, 'Peak').slice(0, 4), members.slice(0, 4))
})

t.test('removing a folder removes what lies under it; a component goes alone', async (t) => {
  const tree = buildTree(members)
  const network = tree[1]
  const lab = tree[0]
  if (network === undefined || lab === undefined) throw new Error('tree')
  t.same(removeNode(members, network), [members[2], members[4]])
  t.same(removeNode(members, lab), [members[0], members[1], members[3], members[4]])
  const backup = network.children[0]?.children[0]
  if (backup === undefined) throw new Error('no Backup')
  t.same(removeNode(members, backup), members.slice(1))
})

t.test('adding members, and the names that cannot be used', async (t) => {
  t.same(addFolder(members, ['Network'], 'Access').at(-1), { path: ['Network', 'Access'], type: 'folder' })
  t.same(addComponent(members, ['Lab'], 'Ping', 'automations', 'r9').at(-1), { path: '/Lab/Ping', type: 'component', sourceCollection: 'automations', ref: 'r9' })
  t.same(addComponent([], [], 'Root', 's', 'r'), [{ path: '/Root', type: 'component', sourceCollection: 's', ref: 'r' }])
  t.equal(nameProblem(members, ['Network'], 'Core', 'folder'), '"Core" is already in this folder')
  t.equal(nameProblem(members, ['Network'], 'Core', 'component'), undefined, 'a component may share a folder\'s name')
  t.equal(nameProblem(members, ['Network', 'Core'], 'Backup', 'component'), '"Backup" is already in this folder')
  t.equal(nameProblem(members, [], 'a/b', 'folder'), 'A name may not contain "/"')
  t.equal(nameProblem(members, [], '  ', 'folder'), 'The name is empty')
  t.equal(nameProblem(members, [], 'New', 'folder'), undefined)
})
