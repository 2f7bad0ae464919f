import t from 'tap'
import { buildTestApp, createUser, testDatabases } from '../../helper.js'
import { FORM, form, newServiceAccount } from '../../helpers/auth.js'
import { MAX_SESSIONS } from '../../../plugins/auth/sessions-repository.js'

const LOOPS = 8
// Requests a loop sends through HTTP, each hashing a secret or password (scrypt): together past
// MAX_SESSIONS, so the last ones trim while others insert. The session store alone, below, runs
// many more rounds of that race.
const PAST_LIMIT = Math.ceil(MAX_SESSIONS / LOOPS) + 1

/** `LOOPS` loops sending `perLoop` requests each, one after the other; every status seen. */
async function loops (perLoop: number, send: () => Promise<number>): Promise<Record<number, number>> {
  const tally: Record<number, number> = {}
  await Promise.all(Array.from({ length: LOOPS }, async () => {
    for (let i = 0; i < perLoop; i++) {
      const status = await send()
      tally[status] = (tally[status] ?? 0) + 1
    }
  }))
  return tally
}

for (const database of testDatabases) {
  t.test(`parallel token requests for one client and logins of one user on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const password = 'the-right-password'
    await createUser(app, { username: 'service', password })
    const client = await newServiceAccount(app, 'service')
    const count = async (where: string): Promise<number> =>
      (await app.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE ${where}`)).rows[0]?.n ?? -1

    const tokens = await loops(PAST_LIMIT, async () => (await app.inject({
      method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', ...client })
    })).statusCode)
    t.same(tokens, { 200: LOOPS * PAST_LIMIT }, 'every token request answered 200')
    t.equal(await count(`client_id = '${client.client_id}'`), MAX_SESSIONS, 'the client keeps its newest MAX_SESSIONS tokens')

    const logins = await loops(PAST_LIMIT, async () => (await app.inject({
      method: 'POST', url: '/login', payload: { user: { username: 'service', password } }
    })).statusCode)
    t.same(logins, { 200: LOOPS * PAST_LIMIT }, 'every login answered 200')
    t.equal(await count("username = 'service' AND client_id IS NULL"), MAX_SESSIONS, 'the user keeps its newest MAX_SESSIONS sessions')

    // The session store alone, faster than through HTTP: more rounds of the same race.
    const failures: unknown[] = []
    await loops(150, async () => await app.sessionsRepository.create(null, 3600, client.client_id)
      .then(() => 200, (err: unknown) => { failures.push(err); return 503 }))
    t.same(failures.map(String), [], 'no session creation failed')
    t.equal(await count(`client_id = '${client.client_id}'`), MAX_SESSIONS)
  })
}
