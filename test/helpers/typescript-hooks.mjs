// Replaces tap's ts-node plugin, which loads the compiler (about 2.5 s of CPU) into every test
// process and worker thread: see docs/decisions.md, "TypeScript compiled once".
// Module hooks (node:module register) that run the TypeScript sources and tests: `./x.js`
// resolves to `./x.ts` when only that exists, and a .ts file is transpiled file by file as
// ts-node's transpile-only mode does (the same compiler and output, so coverage counts the
// same lines and branches). What is transpiled is kept on disk under node_modules/.cache by a
// digest of the source, the compiler's version and the options: the compiler itself, seconds
// of loading, is loaded only by a process that meets a file not transpiled yet.
import { createHash } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const require = createRequire(import.meta.url)
const TS_VERSION = require('typescript/package.json').version
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'test-typescript')

// tsconfig.json's choices that change the emitted code, with ES modules out (package.json's
// "type": "module") and the source map inline for stack traces and coverage.
const compilerOptions = {
  target: 'ES2022',
  module: 'ESNext',
  esModuleInterop: true,
  inlineSourceMap: true,
  inlineSources: true
}
const KEY = `${TS_VERSION}\0${JSON.stringify(compilerOptions)}`

let ts
async function transpile (source, file) {
  ts ??= (await import('typescript')).default
  const { outputText, diagnostics } = ts.transpileModule(source, {
    fileName: file,
    reportDiagnostics: true,
    compilerOptions: ts.convertCompilerOptionsFromJson(compilerOptions, ROOT).options
  })
  const errors = (diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error)
  if (errors.length > 0) throw new SyntaxError(`${file}: ${ts.flattenDiagnosticMessageText(errors[0].messageText, '\n')}`)
  return outputText
}

export async function resolve (specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context)
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !/^\.{1,2}\/.*\.js$/.test(specifier)) throw err
    return await nextResolve(specifier.replace(/\.js$/, '.ts'), context)
  }
}

export async function load (url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return await nextLoad(url, context)
  return { format: 'module', source: await transpiled(fileURLToPath(url)), shortCircuit: true }
}

// The JavaScript of one .ts file, from the cache or transpiled into it. Also run before the tests
// on every source (warm-typescript-cache.mjs), so that on a new clone the parallel test processes
// find it there instead of each loading the compiler for the same files.
export async function transpiled (file) {
  const source = await readFile(file, 'utf8')
  const digest = createHash('sha256').update(KEY).update('\0').update(file).update('\0').update(source).digest('hex')
  const cached = path.join(CACHE, `${digest}.js`)
  let output = await readFile(cached, 'utf8').catch(() => undefined)
  if (output === undefined) {
    output = await transpile(source, file)
    // Written aside and renamed: a parallel process never reads half a file.
    await mkdir(CACHE, { recursive: true })
    const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`
    await writeFile(partial, output)
    await rename(partial, cached)
  }
  return output
}
