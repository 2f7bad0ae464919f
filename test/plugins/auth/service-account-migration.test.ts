// The upgrade to service accounts (migration 012): an OAuth client that acted as a user keeps its
// id, its secret and its live tokens, and carries the roles and groups its user had.
import t from 'tap'
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openDatabase } from '../../../plugins/database/index.js'
import { MIGRATIONS_DIR, migrate } from '../../../plugins/database/migrations.js'
import { generateToken, tokenDigest } from '../../../lib/auth/tokens.js'
import { hashPassword } from '../../../lib/auth/passwords.js'
import { ADMIN, adminAuth, buildTestApp, createTestDatabase, testConfig, testDatabases } from '../../helper.js'
import { FORM, form } from '../../helpers/auth.js'

for (const kind of testDatabases) {
  t.test(`clients become service accounts with their user's roles and groups (${kind})`, async (t) => {
    const database = await createTestDatabase(t, kind)
    const before = await mkdtemp(path.join(os.tmpdir(), 'netauto-migrations-'))
    t.teardown(async () => { await rm(before, { recursive: true, force: true }) })
    for (const file of await readdir(MIGRATIONS_DIR)) {
      if (file < '012') await cp(path.join(MIGRATIONS_DIR, file), path.join(before, file))
    }
    const clientId = 'a1'.repeat(12)
    const secret = generateToken()
    const token = generateToken()
    const db = await openDatabase(testConfig(database.env))
    try {
      await migrate(db, before)
      // Users exist already, so no bootstrap admin is made: the admin of the tests is one of them.
      await db.query("INSERT INTO users (username, password_hash, roles) VALUES ($1, $2, '{admin}')", [ADMIN.username, await hashPassword(ADMIN.password)])
      await db.query("INSERT INTO users (username, password_hash, roles, groups) VALUES ('robot', 'x', '{designer}', '{net,edge}')")
      await db.query("INSERT INTO oauth_clients (client_id, secret_digest, username, name, created_by) VALUES ($1, $2, 'robot', 'nightly', 'admin')", [clientId, tokenDigest(secret)])
      await db.query("INSERT INTO sessions (token_digest, username, client_id, expires_at) VALUES ($1, 'robot', $2, now() + interval '1 hour')", [tokenDigest(token), clientId])
    } finally {
      await db.close()
    }

    const app = await buildTestApp(t, { database }) // applies 012
    const who = await app.inject({ url: '/whoami', headers: { authorization: `Bearer ${token}` } })
    t.equal(who.statusCode, 200, who.body)
    t.match(who.json(), { id: clientId, firstname: 'nightly', roles: ['designer'], groups: [{ name: 'net' }, { name: 'edge' }], clientId })
    const issued = await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }) })
    t.equal(issued.statusCode, 200, 'the secret still holds')
    const list = await app.inject({ url: '/oauth/serviceAccounts', headers: { authorization: adminAuth } })
    t.match(list.json().results, [{ client_id: clientId, name: 'nightly', description: '', roles: ['designer'], groups: ['net', 'edge'], _meta: { createdBy: { username: 'admin' }, updatedBy: { username: 'admin' } } }])
    // The user and the account are apart now: deleting the user leaves the account and its tokens.
    t.equal((await app.inject({ method: 'DELETE', url: '/users/robot', headers: { authorization: adminAuth } })).statusCode, 200)
    app.forgetCredentials(`serviceAccount:${clientId}`)
    t.equal((await app.inject({ url: '/whoami', headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
  })
}
