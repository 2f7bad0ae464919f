// Logging in and making service accounts through the API, for the authentication tests.
import { ADMIN, adminAuth, type TestApp } from '../helper.js'

export const MAINTENANCE = '/configuration_manager/ismaintenance'
// A route of each area, read with the caller's credential: users (admin), studio, configuration
// manager, orchestrator adapters.
export const AREA_ROUTES = ['/users', '/studio/component-groups', MAINTENANCE, '/orchestrator_manager/adapters']

export async function login (app: TestApp, username: string = ADMIN.username, password: string = ADMIN.password): Promise<{ token: string, cookie: string }> {
  const response = await app.inject({ method: 'POST', url: '/login', payload: { user: { username, password } } })
  if (response.statusCode !== 200) throw new Error(`login: ${response.statusCode} ${response.body}`)
  const token = response.json<string>()
  const setCookie = response.headers['set-cookie']
  return { token, cookie: String(Array.isArray(setCookie) ? setCookie[0] : setCookie) }
}

/** Makes a service account with the platform's body, its roles and groups beside the name. */
export async function newServiceAccount (app: TestApp, name: string, access: { roles?: string[], groups?: string[] } = {}): Promise<{ client_id: string, client_secret: string }> {
  const response = await app.inject({ method: 'POST', url: '/oauth/serviceAccounts', headers: { authorization: adminAuth }, payload: { accountData: { name, description: 'ci', ...access } } })
  if (response.statusCode !== 200) throw new Error(`service account: ${response.statusCode} ${response.body}`)
  return response.json()
}

export const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString()
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
