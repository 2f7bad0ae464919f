// The document as the tools its users point at it read it: Redocly's `recommended` rules and
// Spectral's `spectral:oas`, with no error. The warnings left are the ones justified below.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { buildTestApp } from '../helper.js'
import { documentOf } from '../helpers/openapi.js'

const run = promisify(execFile)
const BIN = fileURLToPath(new URL('../../node_modules/.bin/', import.meta.url))

// Warnings kept on purpose:
// - info-license-strict: the license is proprietary; it has no URL or SPDX identifier to give.
// - no-unused-components / oas3-unused-component: AuditEvent is the whole event, for clients; list
//   items are AuditEvent's fields, any of which include / exclude may leave out.
// - operation-2xx-response / operation-success-response: POST /git/{gitType}/repos[/{repoPath}]
//   exist to answer 501 (the platform has them; this service does not create repositories).
// - info-contact: no contact is published for the API.
const REDOCLY_WARNINGS = new Set(['info-license-strict', 'no-unused-components', 'operation-2xx-response'])
const SPECTRAL_WARNINGS = new Set(['info-contact', 'oas3-unused-component', 'operation-success-response'])

async function written (t: Test): Promise<string> {
  const app = await buildTestApp(t, { database: 'any' })
  const dir = await mkdtemp(path.join(os.tmpdir(), 'openapi-lint-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await writeFile(path.join(dir, 'openapi.json'), JSON.stringify(await documentOf(app)))
  await writeFile(path.join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n')
  await writeFile(path.join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n')
  return dir
}

/** A linter's output, whatever its exit code (non-zero when it found errors). */
async function output (command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(path.join(BIN, command), args, { cwd, maxBuffer: 64 * 1024 * 1024 })
    return stdout
  } catch (err) {
    const { stdout } = err as { stdout?: string }
    if (stdout === undefined || stdout === '') throw err
    return stdout
  }
}

t.test('Redocly recommended: no error', async (t) => {
  const dir = await written(t)
  const report = JSON.parse(await output('redocly', ['lint', 'openapi.json', '--config', 'redocly.yaml', '--format', 'json'], dir)) as {
    problems: Array<{ ruleId: string, severity: string, message: string }>
  }
  const errors = report.problems.filter((p) => p.severity === 'error')
  t.same(errors.map((p) => `${p.ruleId}: ${p.message}`), [], 'no error')
  const warnings = report.problems.filter((p) => p.severity !== 'error').map((p) => p.ruleId)
  t.same(warnings.filter((rule) => !REDOCLY_WARNINGS.has(rule)), [], `only justified warnings (${warnings.length})`)
})

t.test('Spectral spectral:oas: no error', async (t) => {
  const dir = await written(t)
  const results = JSON.parse(await output('spectral', ['lint', 'openapi.json', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet'], dir)) as
    Array<{ code: string, severity: number, message: string, path: string[] }>
  const errors = results.filter((r) => r.severity === 0)
  t.same(errors.map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`), [], 'no error')
  const warnings = results.filter((r) => r.severity !== 0).map((r) => r.code)
  t.same(warnings.filter((rule) => !SPECTRAL_WARNINGS.has(rule)), [], `only justified warnings (${warnings.length})`)
})

t.test('every pattern is within the portable subset: no \\p{...} classes', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  const text = JSON.stringify(await documentOf(app))
  t.notMatch(text, /\\\\[pP]\{/, 'no Unicode property escapes')
  t.notMatch(text, /x-unicode-pattern/, 'the service-only keyword is left out')
})
