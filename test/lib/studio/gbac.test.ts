import t from 'tap'
import { bypassesGbac, gbacParams, listAdmits, mayRead, mayWrite, writeRefusal } from '../../../lib/studio/gbac.js'

const user = (roles: string[], groups: string[]) => ({ roles, groups })
const admin = user(['admin'], [])
const netops = user(['designer'], ['netops'])
const lead = user(['designer'], ['netops', 'leads'])
const outsider = user(['designer'], ['other'])
const open = { gbacRead: [], gbacWrite: [] }
const restricted = { gbacRead: ['netops', 'audit'], gbacWrite: ['leads'] }

t.test('an empty list admits everyone, else a shared group is needed', async (t) => {
  t.ok(listAdmits([], outsider))
  t.ok(listAdmits(['netops'], netops))
  t.ok(listAdmits(['x', 'leads'], lead))
  t.notOk(listAdmits(['netops'], outsider))
  t.notOk(listAdmits(['netops'], user([], [])))
})

t.test('reading and writing', async (t) => {
  t.ok(mayRead(outsider, open))
  t.ok(mayWrite(outsider, open))
  t.ok(mayRead(netops, restricted))
  t.notOk(mayWrite(netops, restricted), 'reading is not writing')
  t.ok(mayWrite(lead, restricted))
  t.notOk(mayRead(outsider, restricted))
  t.notOk(mayWrite(user(['designer'], ['leads']), restricted), 'writing needs reading too')
  t.ok(mayWrite(user(['designer'], ['leads']), { gbacRead: [], gbacWrite: ['leads'] }))
})

t.test('admins bypass every list', async (t) => {
  t.ok(bypassesGbac(admin))
  t.notOk(bypassesGbac(lead))
  t.ok(mayRead(admin, restricted))
  t.ok(mayWrite(admin, { gbacRead: ['x'], gbacWrite: ['y'] }))
})

t.test('gbacParams are the SQL form: bypass flag and a copy of the groups', async (t) => {
  t.same(gbacParams(admin), [true, []])
  const params = gbacParams(lead)
  t.same(params, [false, ['netops', 'leads']])
  t.not(params[1], lead.groups)
})

t.test('why a write was refused, in order: not found, forbidden, stale', async (t) => {
  const doc = { ...restricted, version: 3 }
  t.equal(writeRefusal(lead, undefined, undefined), 'not-found')
  t.equal(writeRefusal(outsider, doc, [3]), 'not-found', 'unreadable is not found, whatever the version')
  t.equal(writeRefusal(netops, doc, [2]), 'forbidden', 'readable, not writable, before staleness')
  t.equal(writeRefusal(lead, doc, [2]), 'stale')
  t.equal(writeRefusal(lead, doc, []), 'stale')
  t.equal(writeRefusal(lead, doc, [3]), undefined)
  t.equal(writeRefusal(lead, doc, undefined), undefined)
  t.equal(writeRefusal(admin, doc, [2, 3]), undefined)
})
