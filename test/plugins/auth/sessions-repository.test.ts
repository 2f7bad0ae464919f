import t from 'tap'
import { buildTestApp, createUser, testDatabases } from '../../helper.js'
import { MAX_SESSIONS } from '../../../plugins/auth/sessions-repository.js'
import { tokenDigest } from '../../../lib/auth/tokens.js'

for (const database of testDatabases) {
  t.test(`sessions table on ${database}: bounded per user, expired rows removed`, async (t) => {
    const app = await buildTestApp(t, { database })
    await createUser(app, { username: 'looper' })
    const repo = app.sessionsRepository
    const first = await repo.create('looper', 3600)
    await app.db.query("UPDATE sessions SET created_at = now() - interval '1 hour'")
    const tokens: string[] = []
    for (let i = 0; i < MAX_SESSIONS; i++) tokens.push((await repo.create('looper', 3600)).token)
    const { rows } = await app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM sessions WHERE username = 'looper'")
    t.equal(rows[0]?.n, MAX_SESSIONS)
    t.equal(await repo.find(tokenDigest(first.token)), undefined, 'the oldest went')
    t.match(await repo.find(tokenDigest(tokens[0] ?? '')), { user: { username: 'looper' }, clientId: null })
    await app.db.query("UPDATE sessions SET expires_at = now() - interval '1 second'")
    await repo.create('admin', 3600)
    const { rows: left } = await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions')
    t.equal(left[0]?.n, 1, 'expired sessions are gone')
    t.equal(await repo.end(tokenDigest('unknown')), false)
  })
}
