// The page's plugin on its own, over a directory of the test's: when the page was not built it
// says so at both prefixes (404, and how to build it); once built, the same paths serve it.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import webPlugin, { PAGE_CSP, PAGE_PREFIXES } from '../../../plugins/web/index.js'

async function serve (t: Test, root: string) {
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } }) // as the service's router
  await app.register(webPlugin, { root })
  t.teardown(async () => { await app.close() })
  return app
}

t.test('the page not built: 404 at both prefixes, saying how to build it', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'web-unbuilt-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const app = await serve(t, root)
  for (const prefix of PAGE_PREFIXES) {
    const page = await app.inject({ url: prefix })
    t.equal(page.statusCode, 404, prefix)
    t.same(page.json(), { statusCode: 404, error: 'Not Found', message: 'The studio page is not built: run npm run build' })
    t.equal(page.headers['content-security-policy'], undefined, 'no page, no page headers')
    const bare = await app.inject({ url: prefix.slice(0, -1) })
    t.equal(bare.statusCode, 301, `${prefix.slice(0, -1)} still goes to its slash`)
    t.equal(bare.headers.location, `${prefix.slice(1, -1)}/`)
    const asset = await app.inject({ url: `${prefix}assets/index-abc123.js` })
    t.equal(asset.statusCode, 404, 'nothing else under the prefix')
  }
})

t.test('the same paths once the page is built', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'web-built-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  await mkdir(path.join(root, 'assets'))
  await writeFile(path.join(root, 'index.html'), '<!doctype html><title>Studio</title>')
  await writeFile(path.join(root, 'assets', 'index-abc123.js'), 'export {}')
  const app = await serve(t, root)
  for (const prefix of PAGE_PREFIXES) {
    const page = await app.inject({ url: prefix })
    t.equal(page.statusCode, 200, prefix)
    t.equal(page.body, '<!doctype html><title>Studio</title>')
    t.equal(page.headers['content-security-policy'], PAGE_CSP)
    t.equal(page.headers['cache-control'], 'no-cache')
    const asset = await app.inject({ url: `${prefix}assets/index-abc123.js` })
    t.equal(asset.statusCode, 200)
    t.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable')
  }
})
