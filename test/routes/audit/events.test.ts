// Every kind of event, on both databases: recorded with its fields, and never a secret of the
// requests it records (the stored rows are searched for each password, token and secret used).
import t from 'tap'
import { adminAuth, ADMIN, basic, buildTestApp, createUser, testDatabases, type TestApp } from '../../helper.js'
import { startGitServer } from '../../fixtures/git-server.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'
import type { AuditEvent } from '../../../schemas/audit.js'

t.setTimeout(300_000)
const GIT_USER = 'audit-bot'
const GIT_TOKEN = 'glpat-Audit-Secret-Token-1c2d3e'
const USER_TOKEN = 'glpat-Users-Own-Token-9a8b7c'
const server = await startGitServer({ username: GIT_USER, password: GIT_TOKEN })
t.teardown(async () => { await server.close() })

const PASSWORDS = {
  first: 'first-Secret-Password-1',
  second: 'second-Secret-Password-2',
  wrong: 'wrong-Secret-Password-3',
  adapter: 'adapter-Secret-Password-4',
  adapterNew: 'adapter-Secret-Password-5'
}

async function events (app: TestApp, query = ''): Promise<AuditEvent[]> {
  await app.audit.flush()
  const response = await app.inject({ method: 'GET', url: `/audit?limit=100&order=1${query}`, headers: { authorization: adminAuth } })
  if (response.statusCode !== 200) throw new Error(`GET /audit: ${response.statusCode} ${response.body}`)
  return (response.json<{ items: AuditEvent[] }>()).items
}

for (const database of testDatabases) {
  t.test(`audit events on ${database}`, async (t) => {
    const nso = await startNso(t, { password: 'nso-Secret-Password-6' })
    const app = await buildTestApp(t, { database, env: { GIT_PROVIDERS: JSON.stringify({ GitHub: { url: server.url, username: GIT_USER, token: GIT_TOKEN } }) } })
    const secrets: string[] = [...Object.values(PASSWORDS), GIT_TOKEN, USER_TOKEN, nso.password, ADMIN.password]
    const inject = async (method: string, url: string, payload?: unknown, authorization: string = adminAuth, headers: Record<string, string> = {}) =>
      await app.inject({ method: method as 'GET', url, headers: { authorization, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) })

    // Users, their roles and groups.
    await createUser(app, { username: 'ann', password: PASSWORDS.first, roles: ['designer'], groups: ['east'], email: 'ann@example.com' })
    t.equal((await inject('PUT', '/users/ann', { password: PASSWORDS.second, roles: ['designer', 'apiwrite'] })).statusCode, 200)
    t.equal((await inject('POST', '/users', { username: 'ann', password: PASSWORDS.first })).statusCode, 409)
    const ann = basic('ann', PASSWORDS.second)
    // Logins: succeeded, failed.
    const login = await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'ann', password: PASSWORDS.second } } })
    t.equal(login.statusCode, 200)
    secrets.push(login.json<string>())
    const logout = await app.inject({ method: 'POST', url: '/logout', headers: { authorization: `Bearer ${login.json<string>()}` } })
    t.same(logout.json(), { loggedOut: true })
    t.equal((await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'ann', password: PASSWORDS.wrong } } })).statusCode, 401)
    // Service accounts and their tokens.
    const created = await inject('POST', '/oauth/serviceAccounts', { accountData: { name: 'pipeline', roles: ['designer'], groups: ['east'] } })
    const { client_id: clientId, client_secret: clientSecret } = created.json<{ client_id: string, client_secret: string }>()
    secrets.push(clientSecret)
    const token = await app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } })
    t.equal(token.statusCode, 200)
    const accessToken = token.json<{ access_token: string }>().access_token
    secrets.push(accessToken)
    t.equal((await app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: PASSWORDS.wrong } })).statusCode, 401)
    // A component group, written by the service account.
    const bearer = `Bearer ${accessToken}`
    const group = await inject('POST', '/studio/component-groups', { componentGroup: { name: 'edge', members: [], gbacRead: [] } }, bearer)
    t.equal(group.statusCode, 200, group.body)
    const groupId = group.json<{ created: { _id: string } }>().created._id
    t.equal((await inject('PUT', `/studio/component-groups/${groupId}`, { update: { name: 'edge-2', members: [], gbacRead: [] } }, bearer)).statusCode, 200)
    t.equal((await inject('POST', '/studio/component-groups/import', { componentGroups: [{ name: 'imported', members: [], gbacRead: [] }] }, bearer)).statusCode, 200)
    t.equal((await inject('DELETE', `/studio/component-groups/${groupId}`, undefined, bearer)).statusCode, 200)
    // Adapters, and relay calls through one.
    await createAdapter(app, nsoAdapter('nso', nso, { password: PASSWORDS.adapter }))
    t.equal((await inject('PUT', '/orchestrator_manager/adapters/nso', { password: nso.password })).statusCode, 200)
    const action = await inject('POST', '/orchestrator_manager/restAction/nso',
      { params: { path: '/restconf/data/tailf-ncs:devices/device=ce0', accept: 'application/yang-data+json', method: 'GET' }, body: {} })
    t.equal(action.statusCode, 200, action.body)
    // Git writes: a user's own token, a project, a branch.
    const repo = `netops/audit-${database}`
    await server.createRepo(repo)
    t.equal((await inject('PUT', '/users/ann/git-credentials/GitHub', { token: USER_TOKEN, username: GIT_USER }, ann)).statusCode, 200)
    t.equal((await inject('DELETE', '/users/ann/git-credentials/GitHub', undefined, ann)).statusCode, 200)
    const project = await inject('POST', `/git/GitHub/repos/${encodeURIComponent(repo)}/branches/main/projects/${encodeURIComponent('site.json')}`,
      { project: { name: 'site' } }, ann)
    t.equal(project.statusCode, 200, project.body)
    const branch = await inject('POST', `/git/GitHub/repos/${encodeURIComponent(repo)}/branches/feature-x`, {}, ann)
    t.equal(branch.statusCode, 200, branch.body)
    // Denied: no credentials, wrong ones, a role missing.
    t.equal((await inject('GET', '/users?token=secret-in-query', undefined, basic('ann', PASSWORDS.wrong))).statusCode, 401)
    t.equal((await inject('GET', '/audit', undefined, ann)).statusCode, 403)
    t.equal((await inject('DELETE', '/orchestrator_manager/adapters/nso')).statusCode, 200)

    const all = await events(app)
    const one = (action: string, outcome = 'success'): AuditEvent => {
      const found = all.filter((e) => e.action === action && e.outcome === outcome)
      t.equal(found.length, 1, `one ${outcome} ${action} event`)
      return found[0] as AuditEvent
    }
    for (const e of all) {
      t.equal(e.address, '127.0.0.1', `${e.action}: client address`)
      t.match(e.requestId, /\S/, `${e.action}: request id`)
      t.ok(Date.parse(e.time) <= Date.now() && Date.parse(e.time) > Date.now() - 600_000, `${e.action}: time`)
      t.ok(e.durationMs >= 0, `${e.action}: duration`)
    }
    t.match(one('user.create'), { actor: 'admin', target: 'ann', status: 200, details: { roles: 'designer', groups: 'east' } })
    t.match(one('user.update'), { actor: 'admin', target: 'ann', details: { fields: 'password,roles', roles: 'designer,apiwrite' } })
    t.match(one('user.create', 'failure'), { target: 'ann', status: 409 })
    t.match(one('login'), { actor: 'ann', target: 'ann', status: 200 })
    t.match(one('login', 'failure'), { actor: 'ann', target: 'ann', status: 401 })
    t.match(one('logout'), { actor: 'ann', target: 'ann', status: 200, details: { ended: true } })
    t.match(one('serviceAccount.create'), { actor: 'admin', target: clientId, details: { name: 'pipeline', roles: 'designer', groups: 'east' } })
    t.match(one('oauth.token'), { actor: null, serviceAccount: clientId, target: clientId, status: 200 })
    t.match(one('oauth.token', 'failure'), { serviceAccount: clientId, status: 401 })
    t.match(one('studio.create'), { actor: `serviceAccount:${clientId}`, serviceAccount: clientId, target: groupId, details: { name: 'edge', version: 1 } })
    t.match(one('studio.replace'), { serviceAccount: clientId, target: groupId, details: { name: 'edge-2', version: 2 } })
    t.match(one('studio.import'), { serviceAccount: clientId, details: { groups: 1, ids: /^[0-9a-f]{24}$/ } })
    t.match(one('studio.delete'), { serviceAccount: clientId, target: groupId })
    t.match(one('adapter.create'), { actor: 'admin', target: 'nso', details: { baseUrl: nso.url } })
    t.match(one('adapter.update'), { target: 'nso', details: { fields: 'password' } })
    t.match(one('adapter.delete'), { target: 'nso' })
    t.match(one('orchestrator.restAction'), { actor: 'admin', target: 'nso', details: { method: 'GET', path: '/restconf/data/tailf-ncs:devices/device=ce0', nsoStatus: 200 } })
    t.match(one('git.credentials.store'), { actor: 'ann', target: 'ann', details: { gitType: 'GitHub' } })
    t.match(one('git.credentials.remove'), { actor: 'ann', target: 'ann' })
    t.match(one('git.project.initialize'), { actor: 'ann', target: `GitHub:${repo}`, details: { branch: 'main', path: 'site.json', commit: /^[0-9a-f]{40}$/ } })
    t.match(one('git.branch.create'), { actor: 'ann', target: `GitHub:${repo}`, details: { branch: 'feature-x', commit: /^[0-9a-f]{40}$/ } })
    const denied = all.filter((e) => e.action === 'request.denied')
    t.match(denied, [
      { actor: 'ann', target: 'GET /users', outcome: 'denied', status: 401 },
      { actor: 'ann', target: 'GET /audit', outcome: 'denied', status: 403 }
    ], 'denied requests, the query string left out')
    t.equal(denied.length, 2)

    // No secret anywhere in the stored rows.
    const { rows } = await app.db.query<{ row: string }>('SELECT row_to_json(e)::text AS row FROM audit_events e')
    t.equal(rows.length, all.length)
    const stored = rows.map((r) => r.row).join('\n')
    for (const secret of secrets) t.notOk(stored.includes(secret), `no secret ${secret.slice(0, 6)}... stored`)
    t.notOk(stored.includes('secret-in-query'), 'no query string stored')
  })
}
