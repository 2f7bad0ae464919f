// The studio page's build: web/ into dist/web, beside the compiled service. Relative URLs (base
// './'), so the page works at /studio/, /automation-studio/ and under a proxy's path prefix; one
// script and one stylesheet with hashed names; a gzipped copy of each, which the service sends to
// clients that accept it.
import { defineConfig, type Plugin } from 'vite'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

const here = path.dirname(fileURLToPath(import.meta.url))
const outDir = path.resolve(here, '../dist/web')

function gzipCopies (): Plugin {
  return {
    name: 'gzip-copies',
    apply: 'build',
    async closeBundle () {
      const walk = async (dir: string): Promise<void> => {
        for (const entry of await readdir(dir, { withFileTypes: true })) {
          const file = path.join(dir, entry.name)
          if (entry.isDirectory()) await walk(file)
          else if (/\.(js|css|html|svg)$/.test(entry.name)) await writeFile(`${file}.gz`, gzipSync(await readFile(file), { level: 9 }))
        }
      }
      await walk(outDir)
    }
  }
}

export default defineConfig({
  root: here,
  base: './',
  plugins: [gzipCopies()],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: true
  }
})
