// Which room may take what from which: routes take only types from plugins/ (what a plugin
// offers them is a decorator), and the benchmark builds the service from app.ts's own blocks.
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { APP_BLOCKS } from '../app.js'
import { SERVICE_PART_NAMES } from '../bench/foundation.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The import and export-from statements of a TypeScript file, each on one line. */
function importsOf (source: string): string[] {
  return [...source.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'[^']+'/gms)].map((m) => m[0].replace(/\s+/g, ' '))
}

t.test('routes import nothing but types from plugins/', async (t) => {
  const files = (await readdir(path.join(ROOT, 'routes'), { recursive: true })).filter((file) => file.endsWith('.ts'))
  t.ok(files.length > 10, 'the routes are read')
  const offending: string[] = []
  for (const file of files) {
    for (const statement of importsOf(await readFile(path.join(ROOT, 'routes', file), 'utf8'))) {
      if (!/from '(\.\.\/)+plugins\//.test(statement)) continue
      if (!/^(import|export) type /.test(statement)) offending.push(`routes/${file}: ${statement}`)
    }
  }
  t.same(offending, [])
})

t.test('the benchmark\'s parts of the service are app.ts\'s blocks, in order', async (t) => {
  t.same(SERVICE_PART_NAMES, ['core', ...APP_BLOCKS.map((block) => block.name)])
})
