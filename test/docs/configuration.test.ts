// Every variable the service reads (ConfigSchema in plugins/core/config.ts) is in .env.example and in
// docs/configuration.md's table, and neither lists one the service does not read (a name read
// outside the schema, such as an old name still accepted, is named in plugins/core/config.ts).
import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ConfigSchema } from '../../plugins/core/config.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const read = async (file: string): Promise<string> => await readFile(path.join(ROOT, file), 'utf8')

/** Variables of .env.example: set (`NAME=value`) or shown commented out (`# NAME=value`), with the value. */
function exampleVariables (text: string): Map<string, string> {
  const variables = new Map<string, string>()
  for (const [, commented, name, value] of text.matchAll(/^(#\s?)?([A-Z][A-Z0-9_]+)=(.*)$/gm)) {
    variables.set(name as string, commented === undefined ? (value as string) : '')
  }
  return variables
}

/** The table's rows: each variable of the first column with the row's default cell. */
function documentedVariables (page: string): Map<string, string> {
  const variables = new Map<string, string>()
  for (const line of page.split('\n')) {
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim())
    if (cells.length < 3 || cells[0] === 'Variable') continue
    for (const [, name] of (cells[0] as string).matchAll(/`([A-Z][A-Z0-9_]+)`/g)) variables.set(name as string, cells[1] as string)
  }
  return variables
}

t.test('.env.example, docs/configuration.md and the configuration schema name the same variables', async (t) => {
  const read_ = Object.keys(ConfigSchema.properties).sort()
  const example = exampleVariables(await read('.env.example'))
  const documented = documentedVariables(await read('docs/configuration.md'))
  const source = await read('plugins/core/config.ts')
  t.ok(read_.length > 40, 'the schema is read')
  for (const name of read_) {
    t.ok(example.has(name), `.env.example lists ${name}`)
    t.ok(documented.has(name), `docs/configuration.md documents ${name}`)
  }
  const readElsewhere = (name: string): boolean => new RegExp(`\\b${name}\\b`).test(source)
  t.same([...example.keys()].filter((name) => !readElsewhere(name)), [], '.env.example lists no variable the service does not read')
  t.same([...documented.keys()].filter((name) => !readElsewhere(name)), [], 'docs/configuration.md documents no variable the service does not read')
  t.same([...documented.keys()].filter((name) => !example.has(name)), [], 'every documented variable is in .env.example')
})

t.test('a default set in .env.example is the one documented', async (t) => {
  const example = exampleVariables(await read('.env.example'))
  const documented = documentedVariables(await read('docs/configuration.md'))
  let checked = 0
  for (const [name, value] of example) {
    if (value === '') continue
    checked++
    t.equal(documented.get(name), `\`${value}\``, `${name}: .env.example and the documentation agree`)
  }
  t.ok(checked > 30, 'most variables have a default to compare')
})
