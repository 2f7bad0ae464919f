// The studio page in a real browser: Debian's chromium driven by playwright-core (never a
// downloaded browser), against the service built by test/helper.ts and listening on 127.0.0.1:0.
import { makeOnce } from '../helper.js'
import type { Test } from 'tap'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { execFile } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { PAGE_DIR } from '../../plugins/web/index.js'
import { buildTestApp, createUser, type TestApp } from '../helper.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export const CHROMIUM = '/usr/bin/chromium'
/** The flags Chromium needs as root, without network, headless. */
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'
]
/** Generous: the machine is shared and slow at times; locators wait for their condition, never for a time. */
export const TIMEOUT_MS = 60_000

export const inCi = (process.env.CI ?? '') !== '' && process.env.CI !== 'false'

export function chromiumInstalled (): boolean {
  try {
    accessSync(CHROMIUM, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * Builds the page (npm run build) unless dist/web holds it; parallel test processes wait for the
 * one that holds the lock.
 */
export async function ensurePageBuilt (): Promise<void> {
  const index = path.join(PAGE_DIR, 'index.html')
  // A build takes minutes on a busy machine: its lock is taken over only after ten.
  await makeOnce(index, async () => { await run('npm', ['run', 'build'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }) }, 600_000)
}

/**
 * A headless chromium, closed when the test ends. playwright-core starts it on a fresh, empty
 * profile of its own (a new temporary --user-data-dir, removed on close); every context is a
 * separate set of cookies.
 */
export async function launchBrowser (t: Test): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: TIMEOUT_MS })
  t.teardown(async () => { await browser.close() })
  return browser
}

/** A fresh browser context (its own cookies) and page, at 1280x800 unless told. */
export async function newPage (t: Test, browser: Browser, viewport = { width: 1280, height: 800 }): Promise<{ context: BrowserContext, page: Page }> {
  const context = await browser.newContext({ viewport })
  context.setDefaultTimeout(TIMEOUT_MS)
  context.setDefaultNavigationTimeout(TIMEOUT_MS)
  t.teardown(async () => { await context.close() })
  const page = await context.newPage()
  return { context, page }
}

export async function listen (app: TestApp): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

/** The service, built, listening, with the page built; `users` made through the API (passwords given back). */
export async function startService (t: Test, env: Record<string, string> = {}): Promise<{ app: TestApp, url: string }> {
  await ensurePageBuilt()
  const app = await buildTestApp(t, { database: 'any', env })
  return { app, url: await listen(app) }
}

export async function makeUser (app: TestApp, username: string, roles: string[], groups: string[] = []): Promise<{ username: string, password: string, auth: string }> {
  const password = `pw-${username}-for-the-browser`
  const auth = await createUser(app, { username, password, roles, groups })
  return { username, password, auth }
}

/** Signs in through the page's form. */
export async function signIn (page: Page, user: { username: string, password: string }): Promise<void> {
  await page.getByLabel('Username').fill(user.username)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

/** Whether the page scrolls sideways (its content wider than the window). */
export async function scrollsSideways (page: Page): Promise<boolean> {
  // As text: this process has no DOM types; the expression runs in the page.
  return await page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth') === true
}
