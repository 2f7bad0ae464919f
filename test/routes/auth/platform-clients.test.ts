// The platform's own clients against a listening server, with the headers they send (ipctl sends
// `Content-Type: application/json` and `Content-Length: 0` on GET and DELETE): logging in (Basic
// and POST /login with its cookie), whoami decoded as ipctl's Go types decode it, a service account
// made with the platform's body and used through POST /oauth/token, and whoami with that token.
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ADMIN, adminAuth, basic, buildTestApp, createUser, testDatabases } from '../../helper.js'
import { form, FORM } from '../../helpers/auth.js'

// ipctl's CurrentUser and UserGroup (pkg/services/current_user.go). Go's decoder fails on a value
// of another JSON type than the field's (a string for []UserGroup, a number for a string, an
// array for the methods map); every field is required here, which is stricter than Go.
const GoUserGroup = Type.Object({ id: Type.String(), name: Type.String(), provenance: Type.String() })
const GoCurrentUser = Type.Object({
  id: Type.String(),
  username: Type.String(),
  firstname: Type.String(),
  groups: Type.Array(GoUserGroup),
  methods: Type.Record(Type.String(), Type.Unknown()),
  provenance: Type.String(),
  roles: Type.Array(Type.String()),
  routes: Type.Array(Type.String())
})
type GoCurrentUser = Static<typeof GoCurrentUser>

interface Answer { status: number, headers: Record<string, string | string[] | undefined>, body: string }

for (const database of testDatabases) {
  t.test(`the platform's clients: login, whoami, a service account and its token (${database})`, async (t) => {
    const app = await buildTestApp(t, { database })
    const base = new URL(await app.listen({ port: 0, host: '127.0.0.1' }))

    /** One request as ipctl sends it: a JSON content type always, and an explicit length. */
    const call = async (method: string, path: string, headers: Record<string, string>, body = ''): Promise<Answer> =>
      await new Promise((resolve, reject) => {
        const req = httpRequest({
          host: base.hostname,
          port: base.port,
          method,
          path,
          headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers },
          timeout: 30_000
        }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }) })
          res.on('error', reject)
        })
        req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer`)))
        req.on('error', reject)
        req.end(body)
      })
    const whoami = async (headers: Record<string, string>): Promise<GoCurrentUser & Record<string, unknown>> => {
      const answer = await call('GET', '/whoami', headers)
      t.equal(answer.status, 200, answer.body)
      const decoded: unknown = JSON.parse(answer.body)
      t.ok(Value.Check(GoCurrentUser, decoded), `ipctl's types decode the answer: ${JSON.stringify([...Value.Errors(GoCurrentUser, decoded)].map((e) => e.path + ' ' + e.message))}`)
      return decoded as GoCurrentUser & Record<string, unknown>
    }

    await createUser(app, { username: 'designer@netops', password: 'designer-password', roles: ['designer'], groups: ['netops', 'edge'] })

    t.test('Basic: a user in groups decodes, with the groups as objects and what it may call', async (t) => {
      const who = await whoami({ authorization: basic('designer@netops', 'designer-password') })
      t.match(who, { id: 'designer@netops', username: 'designer@netops', firstname: 'designer@netops', provenance: 'local', roles: ['designer'] })
      t.same(who.groups, [{ id: 'netops', name: 'netops', provenance: 'local' }, { id: 'edge', name: 'edge', provenance: 'local' }])
      const methods = who.methods as Record<string, string[]>
      t.ok(methods.AutomationStudio?.includes('getComponentGroups'), 'reads component groups')
      t.ok(methods.AutomationStudio?.includes('createComponentGroup'), 'a designer writes them')
      t.ok(methods.ConfigurationManager?.includes('isMaintenance'))
      t.equal(methods.NSOManager, undefined, 'the relay is for admins')
      t.equal(methods.OAuth, undefined, 'so are service accounts')
      t.ok(who.routes.includes('/studio/component-groups'))
      t.notOk(who.routes.includes('/oauth/serviceAccounts'))
      const byIds = await whoami({ authorization: basic('designer@netops', 'designer-password') })
      const byNames = JSON.parse((await call('GET', '/whoami?roles=names', { authorization: basic('designer@netops', 'designer-password') })).body)
      t.same(byNames.roles, byIds.roles, 'roles=names: a role is identified by its name')
      t.equal((await call('GET', '/whoami?roles=other', { authorization: adminAuth })).status, 400, 'roles takes names or ids only')
    })

    t.test('POST /login with its cookie: the admin may call everything', async (t) => {
      const login = await call('POST', '/login', {}, JSON.stringify({ user: { username: ADMIN.username, password: ADMIN.password } }))
      t.equal(login.status, 200, login.body)
      const cookie = String([login.headers['set-cookie']].flat()[0]).split(';')[0] ?? ''
      t.equal(cookie, `token=${JSON.parse(login.body) as string}`)
      const who = await whoami({ cookie })
      t.match(who, { username: ADMIN.username, roles: ['admin'], authenticatedBy: 'cookie' })
      const methods = who.methods as Record<string, string[]>
      t.same(methods.OAuth, ['createServiceAccount', 'getServiceAccounts', 'updateServiceAccount', 'regenerateSecret', 'deleteServiceAccount'])
      t.ok(methods.NSOManager?.includes('restAction') && methods.NSOManager.includes('restQuery'))
      t.ok(methods.Authorization?.includes('getAccounts'))
    })

    t.test('a service account made with the platform\'s body, used through /oauth/token, then whoami with that token', async (t) => {
      const admin = { authorization: adminAuth }
      const made = await call('POST', '/oauth/serviceAccounts', admin, JSON.stringify({ accountData: { name: 'ExampleName', description: 'the external Example system' } }))
      t.equal(made.status, 200, made.body)
      const account = JSON.parse(made.body) as { client_id: string, client_secret: string }
      t.same(Object.keys(account).sort(), ['client_id', 'client_secret'])
      const listed = await call('GET', '/oauth/serviceAccounts', admin)
      t.equal(listed.status, 200, listed.body)
      t.match(JSON.parse(listed.body), { results: [{ client_id: account.client_id, name: 'ExampleName', description: 'the external Example system', roles: [], groups: [] }], total: 1 })
      const patched = await call('PATCH', `/oauth/serviceAccounts/${account.client_id}`, admin, JSON.stringify({ updates: { roles: ['apiwrite'], groups: ['netops'] } }))
      t.equal(patched.status, 200, patched.body)
      t.match(JSON.parse(patched.body), { status: 'OK', data: { roles: ['apiwrite'], groups: ['netops'] } })

      const tokenAnswer = await call('POST', '/oauth/token', FORM, form({ grant_type: 'client_credentials', client_id: account.client_id, client_secret: account.client_secret }))
      t.equal(tokenAnswer.status, 200, tokenAnswer.body)
      const { access_token: token } = JSON.parse(tokenAnswer.body) as { access_token: string }
      const who = await whoami({ authorization: `Bearer ${token}` })
      t.match(who, { id: account.client_id, provenance: 'oauth', firstname: 'ExampleName', roles: ['apiwrite'], clientId: account.client_id })
      t.same(who.groups, [{ id: 'netops', name: 'netops', provenance: 'oauth' }])
      t.ok((who.methods as Record<string, string[]>).AutomationStudio?.includes('updateComponentGroup'), 'apiwrite writes component groups')
      t.equal((await call('GET', '/oauth/serviceAccounts', { authorization: `Bearer ${token}` })).status, 403, 'a service account without admin manages none')
      t.equal((await call('GET', `/users/${encodeURIComponent(String(who.username))}/git-credentials/github`, { authorization: `Bearer ${token}` })).status === 200, false, 'its principal names no user')

      const regenerated = await call('PATCH', `/oauth/serviceAccounts/${account.client_id}/regenerate`, admin)
      t.equal(regenerated.status, 200, regenerated.body)
      t.equal((await call('GET', '/whoami', { authorization: `Bearer ${token}` })).status, 401, 'the old secret\'s token ended')
      const deleted = await call('DELETE', `/oauth/serviceAccounts/${account.client_id}`, admin)
      t.equal(deleted.status, 200, deleted.body)
      t.same(JSON.parse(deleted.body), { status: 'OK', message: `Service account "${account.client_id}" deleted` })
    })
  })
}
