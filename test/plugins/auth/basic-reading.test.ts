// HTTP Basic is read in one way, @fastify/basic-auth's: the places that read a header outside a
// request's authentication (fastify.readBasicCredentials: the token endpoint, the audit actor)
// read what authentication reads, and refuse what it refuses.
import t from 'tap'
import { adminAuth, buildTestApp, createUser } from '../../helper.js'
import { FORM, form, newServiceAccount } from '../../helpers/auth.js'

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64')

t.test('the token endpoint and the audit actor read Basic headers as authentication does', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  await createUser(app, { username: 'zoe', password: 'zoë-pässword', roles: [] })
  const client = await newServiceAccount(app, 'reader')
  const status = async (authorization: string): Promise<number> => (await app.inject({ url: '/whoami', headers: { authorization } })).statusCode
  const token = async (authorization: string): Promise<{ statusCode: number, error?: string, description?: string }> => {
    const response = await app.inject({ method: 'POST', url: '/oauth/token', headers: { ...FORM, authorization }, payload: form({ grant_type: 'client_credentials' }) })
    const body = response.json()
    return { statusCode: response.statusCode, error: body.error, description: body.error_description }
  }

  // Blanks around the scheme and the credentials, a scheme in lower case, UTF-8: read alike.
  const lax = (credentials: string): string => ` \tbasic  ${b64(credentials)} \t`
  t.equal(await status(lax('zoe:zoë-pässword')), 200, 'authentication reads the lax form')
  t.equal((await token(lax(`${client.client_id}:${client.client_secret}`))).statusCode, 200, 'so does the token endpoint')

  // Credentials with a control character are no Basic credentials, to either.
  t.equal(await status(`Basic ${b64('zoe:zoë-\u0001')}`), 401)
  t.match(await token(`Basic ${b64(`${client.client_id}:\u0001${client.client_secret}`)}`),
    { statusCode: 401, error: 'invalid_client', description: 'Client authentication supports HTTP Basic only' }, 'refused as not Basic')

  // The actor of a refused request: the username in the lax form, none in a malformed header.
  t.equal(await status(lax('zoe:wrong')), 401)
  t.equal(await status(`Basic ${b64('zoe:x\u007f')}`), 401)
  app.audit.endDeniedWindow()
  await app.audit.flush()
  const { rows } = await app.db.query<{ actor: string | null }>("SELECT actor FROM audit_events WHERE action = 'request.denied' AND target = 'GET /whoami' ORDER BY id")
  t.same(rows.map((r) => r.actor), [null, 'zoe', null])
  t.equal(await status(adminAuth), 200)
})
