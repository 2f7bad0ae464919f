// The retry of a write whose document changed between the write and the look at why it failed.
// Only a fake database makes that interleaving happen on demand.
import t from 'tap'
import type { Db } from '../../../plugins/database/types.js'
import { componentGroupsRepository, REPLACE_SQL } from '../../../plugins/studio/component-groups-repository.js'

const ID = '0123456789abcdef01234567'
const row = { id: ID, name: 'Raced', version: 5, gbac_read: [], gbac_write: [], doc: { description: '', members: [], meta: {} } }
const fields = { name: 'Raced', description: '', members: [], gbacRead: [], gbacWrite: [], meta: {} }
const designer = { roles: ['designer'], groups: [] }
const actor = { username: 'designer', method: 'basic' }

// A database whose UPDATE touches no row `misses` times, while a look at the row finds it writable.
function fakeDb (misses: number): Db & { updates: number } {
  const db = {
    kind: 'embedded' as const,
    updates: 0,
    async query<R> (text: string) {
      if (text === REPLACE_SQL) {
        db.updates++
        const rows = db.updates > misses ? [{ ...row, version: row.version + 1 }] : []
        return { rows: rows as R[], rowCount: rows.length }
      }
      return { rows: [row] as R[], rowCount: 1 }
    },
    exec: async () => {},
    transaction: async () => { throw new Error('not used') },
    withAdvisoryLock: async () => { throw new Error('not used') },
    poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
    close: async () => {}
  }
  return db
}

t.test('a write that nothing refuses any more is tried again', async (t) => {
  const db = fakeDb(2)
  const outcome = await componentGroupsRepository(db).replace(designer, ID, fields, undefined, actor)
  t.same(outcome, { doc: { _id: ID, ...fields, version: 6 } })
  t.equal(db.updates, 3)
})

t.test('and answered as changed after three attempts', async (t) => {
  const db = fakeDb(Infinity)
  t.same(await componentGroupsRepository(db).replace(designer, ID, fields, [5], actor), { refusal: 'changed' })
  t.equal(db.updates, 3)
})

t.test('a refusal found on the first look is not retried', async (t) => {
  const db = fakeDb(Infinity)
  t.same(await componentGroupsRepository(db).replace(designer, ID, fields, [4], actor), { refusal: 'stale' })
  t.equal(db.updates, 1)
})
