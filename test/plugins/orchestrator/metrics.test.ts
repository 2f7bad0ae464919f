import t from 'tap'
import { adminAuth, buildTestApp } from '../../helper.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'

const ID = 'ACME Zürich core'

// /metrics is open to anyone unless METRICS_AUTH is on: adapter ids must not show there then.
for (const metricsAuth of [false, true]) {
  t.test(`orchestrator_pool_connections with METRICS_AUTH=${String(metricsAuth)}`, async (t) => {
    const app = await buildTestApp(t, { database: 'any', env: { METRICS_AUTH: String(metricsAuth) } })
    const nso = await startNso(t)
    const headers = { authorization: adminAuth }
    for (const id of [ID, 'nso-2']) {
      await createAdapter(app, nsoAdapter(id, nso))
      const query = await app.inject({
        method: 'POST',
        url: `/orchestrator_manager/restQuery/${encodeURIComponent(id)}`,
        headers,
        payload: { params: { path: '/restconf/data/tailf-ncs:devices', accept: 'application/yang-data+json' } }
      })
      t.equal(query.statusCode, 200, `restQuery through ${id}`)
    }

    const scrape = await app.inject({ url: '/metrics', ...(metricsAuth ? { headers } : {}) })
    t.equal(scrape.statusCode, 200)
    const lines = scrape.body.split('\n').filter((line) => line.startsWith('orchestrator_pool_connections{'))
    if (metricsAuth) {
      t.match(scrape.body, /orchestrator_pool_connections\{adapter="ACME Zürich core",state="connected"\} 1/)
      t.match(scrape.body, /orchestrator_pool_connections\{adapter="nso-2",state="running"\} 0/)
    } else {
      t.notOk(scrape.body.includes('Zürich') || scrape.body.includes('nso-2'), 'no adapter id anywhere in the scrape')
      // A socket goes back to `free` a moment after its answer: only `connected` is certain.
      t.same(lines.map((line) => line.replace(/ \d+$/, '')).sort(), ['connected', 'free', 'pending', 'queued', 'running']
        .map((state) => `orchestrator_pool_connections{state="${state}"}`), 'by state only')
      t.ok(lines.includes('orchestrator_pool_connections{state="connected"} 2'), 'the two pools summed')
    }
  })
}
