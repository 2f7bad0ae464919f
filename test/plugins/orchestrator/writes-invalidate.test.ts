// Every write of the adapters repository drops the relay client's cached settings and pool of
// that adapter: the next call uses what was written, however long the cache would keep the old.
// The writes go through the repository, not the routes: what is shown is the repository's wiring.
import t from 'tap'
import { adminAuth, buildTestApp, type TestApp } from '../../helper.js'
import { startNso } from '../../helpers/nso.js'
import type { NsoServer } from '../../fixtures/nso-server.js'
import type { AdapterCreate } from '../../../schemas/orchestrator.js'

const adapter = (id: string, nso: NsoServer): AdapterCreate => ({ id, baseUrl: nso.url, username: nso.username, password: nso.password })

const query = async (app: TestApp, id: string) => await app.inject({
  method: 'POST',
  url: `/orchestrator_manager/restQuery/${id}`,
  headers: { authorization: adminAuth },
  payload: { params: { path: '/restconf/data', accept: 'application/yang-data+json' } }
})

t.test('adapters', async (t) => {
  const app = await buildTestApp(t, { env: { ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000' } })
  const nso = await startNso(t)
  const other = await startNso(t)
  const repo = app.adaptersRepository

  t.test('create: an id asked for before it existed', async (t) => {
    t.equal((await query(app, 'late')).statusCode, 404, 'no such adapter yet')
    const { created } = await repo.create(adapter('late', nso))
    t.ok(created)
    t.equal((await query(app, 'late')).statusCode, 200, 'found on the next call')
  })

  t.test('update: a new address, then a new password', async (t) => {
    await repo.create(adapter('moving', nso))
    t.equal((await query(app, 'moving')).statusCode, 200)
    const pool = app.orchestrator.poolOf('moving')
    const calls = nso.received.length
    await repo.update('moving', { baseUrl: other.url })
    t.equal(pool?.closed, true, 'the old pool is closed')
    t.equal((await query(app, 'moving')).statusCode, 200)
    t.equal(other.received.length, 1, 'the next call goes to the new address')
    t.equal(nso.received.length, calls, 'and not to the old one')
    await repo.update('moving', { password: 'wrong-now' })
    t.equal((await query(app, 'moving')).json().upstream.status, 401, 'the new password is used at once')
  })

  t.test('remove', async (t) => {
    await repo.create(adapter('leaving', nso))
    t.equal((await query(app, 'leaving')).statusCode, 200)
    t.equal(await repo.remove('leaving'), true)
    t.equal(app.orchestrator.poolOf('leaving'), undefined, 'its pool is gone')
    t.equal((await query(app, 'leaving')).statusCode, 404, 'refused on the next call')
  })
})
