// Shared by the orchestrator tests: an NSO stand-in that closes when the test ends, and adapters
// pointing at it.
import type { Test } from 'tap'
import { adminAuth, type TestApp } from '../helper.js'
import { startNsoServer, type NsoServer, type NsoServerOptions } from '../fixtures/nso-server.js'

export async function startNso (t: Test, opts?: NsoServerOptions): Promise<NsoServer> {
  const nso = await startNsoServer(opts)
  t.teardown(async () => { await nso.close() })
  return nso
}

/** The create body of an adapter `id` with `nso`'s address and credentials. */
export function nsoAdapter (id: string, nso: NsoServer, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, baseUrl: nso.url, username: nso.username, password: nso.password, ...over }
}

/** Registers an adapter through the API, as the admin; throws unless it is created. */
export async function createAdapter (app: TestApp, body: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: '/orchestrator_manager/adapters', headers: { authorization: adminAuth }, payload: body })
  if (response.statusCode !== 200) throw new Error(`creating adapter: ${response.statusCode} ${response.body}`)
  return response
}
