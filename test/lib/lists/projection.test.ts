import t from 'tap'
import { parseProjection, project } from '../../../lib/lists/projection.js'

const SPEC = { idField: '_id', fields: ['_id', 'name', 'description', 'version'] }

t.test('projections: the id comes along with include unless excluded', async (t) => {
  const doc = { _id: 'a1', name: 'Core', description: 'd', version: 3 }
  const of = (include?: string, exclude?: string) => {
    const projection = parseProjection(SPEC, { include, exclude })
    if (!projection.ok) throw new Error(projection.reason)
    return project(doc, projection.value)
  }
  t.same(of(), doc)
  t.same(of('name'), { _id: 'a1', name: 'Core' })
  t.same(of('name, version ,'), { _id: 'a1', name: 'Core', version: 3 }, 'spaces and empty entries are ignored')
  t.same(of('name', '_id'), { name: 'Core' })
  t.same(of(undefined, 'description,version'), { _id: 'a1', name: 'Core' })
  t.same(of(undefined, '_id'), { name: 'Core', description: 'd', version: 3 })
  t.same(of(''), doc, 'an empty include keeps everything')
})

t.test('unknown fields and a contradiction are named', async (t) => {
  t.same(parseProjection(SPEC, { include: 'name,members,colour,members' }),
    { ok: false, reason: 'querystring/include names unknown fields "members", "colour"; known: _id, name, description, version' })
  t.same(parseProjection(SPEC, { exclude: 'secret' }), { ok: false, reason: 'querystring/exclude names unknown field "secret"; known: _id, name, description, version' })
  t.same(parseProjection(SPEC, { include: 'name', exclude: 'version' }), { ok: false, reason: 'querystring/exclude may only name "_id" together with include' })
})
