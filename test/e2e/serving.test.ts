// How the page is served and kept safe: cache and security headers, the size of a first load,
// both prefixes and a proxy's path prefix, and writes with the cookie from another origin.
import t from 'tap'
import { createServer } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { adminAuth, ADMIN, type TestApp } from '../helper.js'
import { nginxInstalled, startNginx } from '../fixtures/nginx.js'
import { chromiumInstalled, inCi, launchBrowser, listen, newPage, signIn, startService } from './browser.js'
import { buildTestApp } from '../helper.js'

// A browser on a busy shared machine, and a build of the page when dist/web lacks it: minutes.
t.setTimeout(600_000)

/** The page's first load may not pass this, JavaScript and CSS gzipped. */
const FIRST_LOAD_LIMIT = 100 * 1024

async function createGroup (app: TestApp, name: string, prefix = '/studio'): Promise<{ id: string, edit: string }> {
  const response = await app.inject({
    method: 'POST',
    url: `${prefix}/component-groups`,
    headers: { authorization: adminAuth },
    payload: { componentGroup: { name, gbacRead: [], members: [] } }
  })
  if (response.statusCode !== 200) throw new Error(response.body)
  return { id: response.json().created._id, edit: response.json().edit }
}

const versionOf = async (app: TestApp, id: string): Promise<number> =>
  (await app.inject({ url: `/studio/component-groups/${id}`, headers: { authorization: adminAuth } })).json().version

t.test('headers, prefixes and the first load', async (t) => {
  const { app } = await startService(t)
  for (const prefix of ['/studio/', '/automation-studio/']) {
    const html = await app.inject({ url: prefix })
    t.equal(html.statusCode, 200, prefix)
    t.match(html.headers['content-type'], /^text\/html/)
    t.equal(html.headers['cache-control'], 'no-cache', 'the HTML is revalidated each time')
    const csp = String(html.headers['content-security-policy'])
    t.match(csp, /default-src 'none'/)
    t.match(csp, /script-src 'self'(;|$)/, 'no inline script, no other origin')
    t.match(csp, /frame-ancestors 'none'/)
    t.notMatch(csp, /unsafe-inline|unsafe-eval|https?:/)
    t.notMatch(html.body, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script in the page')
    t.notMatch(html.body, /(src|href)="\/(?!\/)/, 'relative asset URLs only (they load under a proxy\'s prefix)')
  }
  const bare = await app.inject({ url: '/automation-studio' })
  t.equal(bare.statusCode, 301)
  t.equal(bare.headers.location, 'automation-studio/', 'relative, so that it holds under a prefix')
  t.equal((await app.inject({ url: '/studio/no-such-file.js' })).statusCode, 404)
  t.equal((await app.inject({ url: '/studio/component-groups' })).statusCode, 401, 'the API under the same prefix is untouched')

  const index = (await app.inject({ url: '/studio/' })).body
  const assets = [...index.matchAll(/(?:src|href)="\.\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1] as string)
  t.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), `a script and a stylesheet: ${assets.join(', ')}`)
  let gzipped = 0
  for (const asset of assets) {
    const response = await app.inject({ url: `/studio/${asset}`, headers: { 'accept-encoding': 'gzip' } })
    t.equal(response.statusCode, 200)
    t.match(asset, /-[A-Za-z0-9_-]{8,}\.(js|css)$/, 'a hashed name')
    t.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable')
    t.equal(response.headers['content-encoding'], 'gzip', 'the gzipped copy made at build time')
    const plain = await app.inject({ url: `/studio/${asset}` })
    t.same(gunzipSync(response.rawPayload), plain.rawPayload, 'the same content')
    gzipped += response.rawPayload.length
  }
  t.comment(`first load: ${gzipped} bytes of JavaScript and CSS, gzipped`)
  t.ok(gzipped <= FIRST_LOAD_LIMIT, `first load ${gzipped} bytes gzipped, at most ${FIRST_LOAD_LIMIT}`)
})

if (!chromiumInstalled()) {
  if (inCi) t.fail('The studio page tests need Debian\'s chromium at /usr/bin/chromium (.ci/run installs it)')
  else t.plan(0, 'skipped locally: /usr/bin/chromium is missing (apt-get install chromium)')
} else {
  t.test('in the browser', async (t) => {
    const { app, url } = await startService(t)
    const browser = await launchBrowser(t)

    t.test('the first load: no policy violation, and how long it takes', async (t) => {
      const { page } = await newPage(t, browser)
      const violations: string[] = []
      page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) violations.push(message.text()) })
      const started = Date.now()
      await page.goto(`${url}/studio/`)
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      t.comment(`first load to the sign-in form: ${Date.now() - started} ms`)
      await signIn(page, ADMIN)
      await page.getByRole('heading', { name: 'Component groups' }).waitFor()
      t.same(violations, [], 'nothing the policy refused')
    })

    t.test('the platform\'s prefix: its edit link opens the editor there', async (t) => {
      const { edit } = await createGroup(app, 'Platform path', '/automation-studio')
      t.match(edit, /^\/automation-studio\/#\/edit\?tab=0&component-group=/)
      const { page } = await newPage(t, browser)
      await page.goto(url + edit)
      await signIn(page, ADMIN)
      t.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Platform path')
      await page.getByLabel('Description').fill('from /automation-studio/')
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('status').filter({ hasText: 'Saved: version 2.' }).waitFor()
      t.match(page.url(), /\/automation-studio\/#/)
    })

    t.test('a page on another port cannot write with the signed-in browser\'s cookie', async (t) => {
      const { id } = await createGroup(app, 'Cross-site target')
      const target = `${url}/studio/component-groups/${id}/versions/1/restore`
      // Another origin of the same site: the cookie (SameSite=Strict) goes along all the same.
      const evil = createServer((_request, response) => {
        response.setHeader('content-type', 'text/html')
        response.end(`<!doctype html><form method="POST" action="${target}"><button>Go</button></form>`)
      })
      evil.listen(0, '127.0.0.1')
      await once(evil, 'listening')
      t.teardown(() => { evil.close() })
      const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`

      const { page } = await newPage(t, browser)
      await page.goto(`${url}/studio/`)
      await signIn(page, ADMIN)
      await page.goto(evilUrl)
      const fetched = await page.evaluate(`fetch(${JSON.stringify(target)}, { method: 'POST', credentials: 'include', mode: 'no-cors' }).then(() => 'sent', (e) => String(e))`)
      t.equal(fetched, 'sent', 'the browser sent it (no preflight for a bodiless POST)')
      t.equal(await versionOf(app, id), 1, 'a cross-origin fetch restored nothing')
      const [answer] = await Promise.all([page.waitForResponse(target), page.getByRole('button', { name: 'Go' }).click()])
      t.equal(answer.status(), 403, 'a cross-origin form post is refused')
      t.match(await answer.json(), { code: 'CROSS_ORIGIN_WRITE_REFUSED' })
      t.equal(await versionOf(app, id), 1, 'nothing restored')

      // The same write from the service's own page goes through: the check is about the origin.
      await page.goto(`${url}/studio/`)
      await page.getByRole('button', { name: 'Sign out' }).waitFor()
      const own = await page.evaluate(`fetch(${JSON.stringify(target)}, { method: 'POST', credentials: 'same-origin' }).then((r) => r.status)`)
      t.equal(own, 200)
      t.equal(await versionOf(app, id), 2)
    })

    t.test('signing out ends the session', async (t) => {
      const { page } = await newPage(t, browser)
      await page.goto(`${url}/studio/`)
      await signIn(page, ADMIN)
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      await page.reload()
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      t.pass('signed out, also after a reload')
    })
  })

  t.test('behind nginx under a path prefix', async (t) => {
    if (!nginxInstalled()) {
      if (inCi) t.fail('needs nginx (.ci/run installs it)')
      return
    }
    const app = await buildTestApp(t, { database: 'any', env: { TRUST_PROXY: 'loopback' } })
    const service = await listen(app)
    const proxy = await startNginx((port) => `
      server {
        listen 127.0.0.1:${port};
        location /netauto/ {
          proxy_pass ${service}/;
          proxy_set_header Host $host;
          proxy_set_header X-Forwarded-Proto $scheme;
          proxy_set_header X-Forwarded-Host $http_host;
          proxy_set_header X-Forwarded-Prefix /netauto;
        }
      }`)
    t.teardown(proxy.stop)
    const created = await fetch(`${proxy.url}/netauto/studio/component-groups`, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify({ componentGroup: { name: 'Behind the proxy', gbacRead: [], members: [] } })
    })
    const { edit } = await created.json() as { edit: string }
    t.match(edit, new RegExp(`^${proxy.url}/netauto/studio/#/edit\\?tab=0&component-group=`), 'the link under the prefix')
    const browser = await launchBrowser(t)
    const { page } = await newPage(t, browser)
    await page.goto(edit)
    await signIn(page, ADMIN)
    await page.getByLabel('Description').fill('through nginx')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved: version 2.' }).waitFor()
    await page.goto(`${proxy.url}/netauto/automation-studio`)
    await page.getByRole('link', { name: 'Behind the proxy' }).waitFor()
    t.equal(page.url(), `${proxy.url}/netauto/automation-studio/`, 'the bare path sent to the page\'s directory, under the prefix')
  })
}
