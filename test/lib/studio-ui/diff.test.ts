import t from 'tap'
import { canonicalJson, diffGroups, memberLabel, type GroupContent } from '../../../lib/studio-ui/diff.js'

const base: GroupContent = {
  name: 'Core routers',
  description: 'Backbone',
  members: [{ path: ['Network'], type: 'folder' }, { path: '/Network/Backup', sourceCollection: 'automations', ref: 'r1' }],
  gbacRead: ['netops'],
  gbacWrite: [],
  meta: { owner: 'dana', tags: ['a'] }
}

t.test('the same content: no change, whatever the order of keys in meta', async (t) => {
  t.same(diffGroups(base, { ...base, meta: { tags: ['a'], owner: 'dana' } }), [])
})

t.test('every field that differs, in a fixed order', async (t) => {
  const other: GroupContent = {
    name: 'Core',
    description: '',
    members: [{ path: ['Network'] }, { path: '/Network/Check', type: 'component', sourceCollection: 'automations', ref: 'r2' }],
    gbacRead: ['netops', 'leads'],
    gbacWrite: ['leads'],
    meta: {}
  }
  t.same(diffGroups(base, other), [
    { field: 'name', before: 'Core routers', after: 'Core' },
    { field: 'description', before: 'Backbone', after: '' },
    { field: 'gbacRead', added: ['leads'], removed: [] },
    { field: 'gbacWrite', added: ['leads'], removed: [] },
    { field: 'members', added: ['/Network/Check (component automations/r2)'], removed: ['/Network/Backup (component automations/r1)'] },
    { field: 'meta', before: '{"owner":"dana","tags":["a"]}', after: '{}' }
  ])
})

t.test('members and JSON as text', async (t) => {
  t.equal(memberLabel({ path: ['a', 'b'] }), '/a/b/ (folder)')
  t.equal(memberLabel({ path: '/a/c', sourceCollection: 's', ref: 'r' }), '/a/c (component s/r)')
  t.equal(canonicalJson({ b: [1, { d: null, c: 'x' }], a: true }), '{"a":true,"b":[1,{"c":"x","d":null}]}')
  t.equal(canonicalJson(undefined), 'null')
})
