// docs/errors.md lists every code of every area's catalog (lib/<area>/errors.ts) with its status,
// and nothing else but Fastify's own FST_ERR_* codes.
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { catalogEntries } from '../../lib/http/errors.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Every errors.ts under lib/, loaded so that their codes are in the catalog. */
async function loadCatalogs (): Promise<string[]> {
  const files = (await readdir(path.join(ROOT, 'lib'), { recursive: true }))
    .filter((file) => path.basename(file) === 'errors.ts')
  for (const file of files) await import(path.join(ROOT, 'lib', file))
  return files
}

/** The codes of the page's tables (the column headed `code`), with the status where a column gives it. */
function documentedCodes (page: string): Map<string, number | undefined> {
  const codes = new Map<string, number | undefined>()
  let codeColumn = -1
  let statusColumn = -1
  for (const line of page.split('\n')) {
    if (!line.startsWith('|')) { codeColumn = -1; continue }
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim())
    if (codeColumn === -1) {
      const headers = cells.map((cell) => cell.replaceAll('`', '').toLowerCase())
      codeColumn = headers.indexOf('code')
      statusColumn = headers.indexOf('status')
      continue
    }
    const cell = cells[codeColumn]
    if (cell === undefined) continue
    const status = statusColumn === -1 ? undefined : Number(cells[statusColumn])
    for (const [, code] of cell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) codes.set(code as string, status)
  }
  return codes
}

t.test('docs/errors.md and the catalogs list the same codes, with the same statuses', async (t) => {
  const files = await loadCatalogs()
  t.ok(files.length >= 5, `catalogs found: ${files.join(', ')}`)
  const documented = documentedCodes(await readFile(path.join(ROOT, 'docs/errors.md'), 'utf8'))
  const catalog = catalogEntries()
  t.ok(catalog.length > 0)
  for (const entry of catalog) {
    t.ok(documented.has(entry.code), `${entry.code} is documented`)
    const status = documented.get(entry.code)
    if (status !== undefined) t.equal(status, entry.statusCode, `${entry.code} is documented with its status`)
  }
  const defined = new Set(catalog.map((entry) => entry.code))
  for (const code of documented.keys()) {
    if (code.startsWith('FST_')) continue
    t.ok(defined.has(code), `documented code ${code} is in a catalog`)
  }
})

t.test('the page has no error without a code', async (t) => {
  const page = await readFile(path.join(ROOT, 'docs/errors.md'), 'utf8')
  t.notMatch(page, /^\| \(none\) \|/m)
})
