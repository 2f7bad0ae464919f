// Token authentication against Basic: the same lightest route of the same service process, once
// with a session token as Bearer and once with Basic credentials, in alternating rounds.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pairedRounds, report, startServer, summarise } from './measure.js'

const ADMIN_PASSWORD = 'bench-admin-password'
const basic = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
const ROUNDS = { connections: 10, seconds: 1, rounds: 8, warmupRounds: 2 }

/**
 * Both credentials are remembered by the process after their first request (a Basic credential
 * for AUTH_CACHE_TTL_MS, a token for TOKEN_CACHE_TTL_MS, each re-read beside a request in the
 * second half of that time), so neither pays a password hash nor a database round trip per request.
 */
export async function maintenanceBearerVsBasic (): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-auth-'))
  const route = '/configuration_manager/ismaintenance'
  const service = await startServer('service', { DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_PASSWORD })
  try {
    const login = await fetch(`${service.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: { username: 'admin', password: ADMIN_PASSWORD } }),
      signal: AbortSignal.timeout(30_000)
    })
    if (login.status !== 200) throw new Error(`POST /login answered ${login.status}`)
    const token = await login.json() as string
    const pid = service.child.pid
    const rounds = await pairedRounds(
      { url: service.url + route, headers: { authorization: `Bearer ${token}` }, pid },
      { url: service.url + route, headers: { authorization: basic }, pid },
      ROUNDS)
    report({ scenario: 'ismaintenance-bearer-vs-basic', target: 'ratio >= 0.95', database: 'embedded', rounds: rounds.candidate.length, ...summarise(rounds) })
  } finally {
    await service.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}
