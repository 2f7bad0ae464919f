// Every write of the users and sessions repositories drops what the instance remembers of the
// credentials it changes: the next request sees the change, however long the caches would keep
// the old answer. The writes are made through the repositories, not the routes, so what is shown
// is the repositories' own wiring; the last test keeps the routes from invalidating caches themselves.
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { basic, buildTestApp, createUser, type TestApp } from '../../helper.js'
import { FORM, form, login, newServiceAccount } from '../../helpers/auth.js'
import { tokenDigest } from '../../../lib/auth/tokens.js'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
// Remembered far longer than any test takes: only an invalidation makes a change show.
const env = { AUTH_CACHE_TTL_MS: '3600000', TOKEN_CACHE_TTL_MS: '5000' }
const ADMIN_ONLY = '/users'

const status = async (app: TestApp, authorization: string, url = ADMIN_ONLY): Promise<number> =>
  (await app.inject({ url, headers: { authorization } })).statusCode

async function serviceAccountToken (app: TestApp, roles: string[]): Promise<{ clientId: string, bearer: string }> {
  const account = await newServiceAccount(app, `robot-${Math.random().toString(36).slice(2, 8)}`, { roles })
  const response = await app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { ...FORM, authorization: basic(account.client_id, account.client_secret) },
    payload: form({ grant_type: 'client_credentials' })
  })
  if (response.statusCode !== 200) throw new Error(`token: ${response.statusCode} ${response.body}`)
  return { clientId: account.client_id, bearer: `Bearer ${response.json<{ access_token: string }>().access_token}` }
}

t.test('users', async (t) => {
  const app = await buildTestApp(t, { env })

  t.test('update: roles taken away', async (t) => {
    const auth = await createUser(app, { username: 'demoted', roles: ['admin'] })
    t.equal(await status(app, auth), 200, 'an admin, remembered')
    await app.usersRepository.update('demoted', { roles: ['designer'] })
    t.equal(await status(app, auth), 403, 'the next request has the new roles')
  })

  t.test('update: a new password', async (t) => {
    const auth = await createUser(app, { username: 'rotated', roles: ['admin'] })
    t.equal(await status(app, auth), 200)
    await app.usersRepository.update('rotated', { password: 'a-new-password-entirely' })
    t.equal(await status(app, auth), 401, 'the old password is refused at once')
    t.equal(await status(app, basic('rotated', 'a-new-password-entirely')), 200, 'the new one works')
  })

  t.test('update: disabled', async (t) => {
    const auth = await createUser(app, { username: 'benched', roles: ['admin'] })
    t.equal(await status(app, auth), 200)
    await app.usersRepository.update('benched', { disabled: true })
    t.equal(await status(app, auth), 401)
  })

  t.test('remove', async (t) => {
    const auth = await createUser(app, { username: 'leaving', roles: ['admin'] })
    t.equal(await status(app, auth), 200)
    t.equal(await app.usersRepository.remove('leaving'), true)
    t.equal(await status(app, auth), 401)
  })
})

t.test('sessions and service accounts', async (t) => {
  const app = await buildTestApp(t, { env })

  t.test('end: a session ended', async (t) => {
    await createUser(app, { username: 'visitor', password: 'visitor-password', roles: ['admin'] })
    const { token } = await login(app, 'visitor', 'visitor-password')
    t.equal(await status(app, `Bearer ${token}`), 200, 'the token, remembered')
    t.equal(await app.sessionsRepository.end(tokenDigest(token)), true)
    t.equal(await status(app, `Bearer ${token}`), 401, 'refused on the next request')
  })

  t.test('updateServiceAccount: roles taken away', async (t) => {
    const { clientId, bearer } = await serviceAccountToken(app, ['admin'])
    t.equal(await status(app, bearer), 200)
    await app.sessionsRepository.updateServiceAccount(clientId, { roles: ['apiwrite'] }, 'admin')
    t.equal(await status(app, bearer), 403, 'its tokens have the new roles')
  })

  t.test('regenerateSecret', async (t) => {
    const { clientId, bearer } = await serviceAccountToken(app, ['admin'])
    t.equal(await status(app, bearer), 200)
    t.type(await app.sessionsRepository.regenerateSecret(clientId, 'admin'), 'string')
    t.equal(await status(app, bearer), 401, 'the old secret\'s tokens end')
  })

  t.test('deleteServiceAccount', async (t) => {
    const { clientId, bearer } = await serviceAccountToken(app, ['admin'])
    t.equal(await status(app, bearer), 200)
    t.equal(await app.sessionsRepository.deleteServiceAccount(clientId), true)
    t.equal(await status(app, bearer), 401)
  })
})

t.test('no route invalidates a cache itself: the repositories do', async (t) => {
  const files = (await readdir(path.join(ROOT, 'routes'), { recursive: true })).filter((file) => file.endsWith('.ts'))
  t.ok(files.length > 10, 'the routes are read')
  const calls: string[] = []
  for (const file of files) {
    const source = await readFile(path.join(ROOT, 'routes', file), 'utf8')
    for (const [call] of source.matchAll(/\b(forgetCredentials|\.forget)\s*\(/g)) calls.push(`routes/${file}: ${call}`)
  }
  t.same(calls, [])
})
