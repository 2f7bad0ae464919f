// Writes the OpenAPI document, as the service serves it at /openapi.json, to a file (default
// web/generated/openapi.json) without a running server: the service is built on an embedded
// database in a temporary directory and asked through inject(). The page's typed API client is
// generated from this file at build time (npm run build).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { buildApp } from './app.js'
import { loadConfig } from './plugins/core/config.js'

const target = path.resolve(process.argv[2] ?? 'web/generated/openapi.json')
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'netauto-openapi-'))
try {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ADMIN_PASSWORD: 'openapi-document-build', LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: '0' })
  const app = await buildApp(config)
  try {
    const response = await app.inject({ method: 'GET', url: '/openapi.json' })
    if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}`)
    await mkdir(path.dirname(target), { recursive: true })
    await writeFile(target, JSON.stringify(JSON.parse(response.body), null, 2) + '\n')
  } finally {
    await app.close()
  }
} finally {
  await rm(dataDir, { recursive: true, force: true })
}
process.stdout.write(`OpenAPI document written to ${path.relative(process.cwd(), target)}\n`)
