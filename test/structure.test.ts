// Which room may take what from which: routes take only types from plugins/ (what a plugin
// offers them is a decorator); lib/ is pure (no database, no plugin, no route, TypeBox only as
// types, and none at all in the list language, whose schemas are schemas/lists.ts); and the
// benchmark builds the service from app.ts's own blocks.
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

/** The offending import statements of the .ts files under `dir`, by `offends`. */
async function offendingImports (dir: string, offends: (statement: string) => boolean): Promise<string[]> {
  const files = (await readdir(path.join(ROOT, dir), { recursive: true })).filter((file) => file.endsWith('.ts'))
  const offending: string[] = []
  for (const file of files) {
    for (const statement of importsOf(await readFile(path.join(ROOT, dir, file), 'utf8'))) {
      if (offends(statement)) offending.push(`${dir}/${file}: ${statement}`)
    }
  }
  return offending
}

t.test('lib/ is pure: no database, plugin or route; TypeBox only as types, and not in the list language', async (t) => {
  t.same(await offendingImports('lib', (statement) =>
    /from '(pg|@electric-sql\/pglite[^']*|fastify)'/.test(statement) || /from '(\.\.\/)+(plugins|routes)\//.test(statement)), [])
  t.same(await offendingImports('lib', (statement) =>
    /from '@sinclair\/typebox[^']*'/.test(statement) && !/^(import|export) type /.test(statement)), [], 'TypeBox only as types')
  t.same(await offendingImports('lib/lists', (statement) => /from '(@sinclair\/typebox[^']*|(\.\.\/)+schemas\/[^']*)'/.test(statement)), [],
    'the list language takes nothing from TypeBox or schemas/')
  t.ok((await readdir(path.join(ROOT, 'lib', 'lists'))).length >= 5, 'the list language is read')
})

t.test('the rules see what they look for', async (t) => {
  const lists = (await offendingImports('lib/lists', () => true)).join('\n')
  t.match(lists, /lib\/lists\/page\.ts: import .* from '\.\/grammar\.js'/, 'the imports of lib/lists are read')
  t.same(importsOf("import {\n  Type,\n  type Static\n} from '@sinclair/typebox'\nconst x = 1"), ["import { Type, type Static } from '@sinclair/typebox'"],
    'an import over several lines is one statement')
})

t.test('the benchmark\'s parts of the service are app.ts\'s blocks, in order', async (t) => {
  t.same(SERVICE_PART_NAMES, ['core', ...APP_BLOCKS.map((block) => block.name)])
})
