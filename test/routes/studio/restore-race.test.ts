// Two admins restore the same deleted group at once, on both databases: one brings it back, the
// other is told it changed (409), never that it is not there (404). Many rounds, since the
// requests interleave differently each time (the second one starts a little later each round).
import t from 'tap'
import { adminAuth, buildTestApp, testDatabases, type TestApp } from '../../helper.js'

const BASE = '/studio/component-groups'
const ROUNDS = 40
// The second request starts 0 to LAGS - 1 turns of the event loop after the first, so that its
// reads fall before, between and after the first one's.
const LAGS = 20

async function deletedGroup (app: TestApp, name: string): Promise<{ id: string, deleteVersion: number }> {
  const created = await app.inject({ method: 'POST', url: BASE, headers: { authorization: adminAuth }, payload: { componentGroup: { name, members: [], gbacRead: [] } } })
  const id = (created.json() as { created: { _id: string } }).created._id
  const deleted = await app.inject({ method: 'DELETE', url: `${BASE}/${id}`, headers: { authorization: adminAuth } })
  if (deleted.statusCode !== 200) throw new Error(`delete: ${deleted.statusCode} ${deleted.body}`)
  return { id, deleteVersion: 2 }
}

const turns = async (n: number): Promise<void> => { for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve)) }

/** Two restores of `id`, the second sent `lag` turns of the event loop after the first. */
async function restoreTwice (app: TestApp, id: string, lag: number, ifMatch?: string): Promise<Array<{ status: number, code?: string }>> {
  const headers = { authorization: adminAuth, ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }) }
  const answers = await Promise.all([0, lag].map(async (wait) => {
    await turns(wait)
    return await app.inject({ method: 'POST', url: `${BASE}/${id}/versions/1/restore`, headers })
  }))
  return answers.map((a) => ({ status: a.statusCode, code: (a.json() as { code?: string }).code }))
}

for (const database of testDatabases) {
  t.test(`concurrent restores of a deleted group on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const seen = new Map<string, number>()
    let wrong = 0
    for (let round = 0; round < ROUNDS; round++) {
      // If-Match names the delete: exactly one restore can match it.
      const { id, deleteVersion } = await deletedGroup(app, `race-${round}`)
      const answers = await restoreTwice(app, id, round % LAGS, `"${deleteVersion}"`)
      const statuses = answers.map((a) => `${a.status} ${a.code ?? ''}`.trim()).sort()
      for (const a of answers) seen.set(`${a.status} ${a.code ?? ''}`, (seen.get(`${a.status} ${a.code ?? ''}`) ?? 0) + 1)
      if (statuses[0] !== '200' || statuses[1] !== '409 VERSION_CONFLICT') { wrong++; t.comment(`lag ${round % LAGS}: ${JSON.stringify(answers)}`) }
      const history = await app.inject({ url: `${BASE}/${id}/versions`, headers: { authorization: adminAuth } })
      t.same((history.json() as { items: Array<{ version: number }> }).items.map((e) => e.version), [3, 2, 1], `round ${round}: restored once`)

      // Without If-Match each restore is a write of its own: never a 404.
      const again = await deletedGroup(app, `race-plain-${round}`)
      const plain = await restoreTwice(app, again.id, round % LAGS)
      for (const a of plain) seen.set(`${a.status} ${a.code ?? ''} (no If-Match)`, (seen.get(`${a.status} ${a.code ?? ''} (no If-Match)`) ?? 0) + 1)
      if (plain.some((a) => a.status !== 200 && a.status !== 409) || !plain.some((a) => a.status === 200)) { wrong++; t.comment(`plain lag ${round % LAGS}: ${JSON.stringify(plain)}`) }
    }
    t.comment([...seen].map(([answer, times]) => `${answer}: ${times}`).join(', '))
    t.equal(wrong, 0, `every round: one 200, the other a 409 VERSION_CONFLICT (or, without If-Match, a 200 or 409), never 404 (${ROUNDS} rounds each way)`)
  })
}
