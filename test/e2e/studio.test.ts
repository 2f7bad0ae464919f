// The studio page in headless chromium against the service: following an edit link signed out,
// signing in, the list, editing, conflicts, read-only users, history, delete and the deleted
// groups, at desktop and phone width.
import t from 'tap'
import type { Page } from 'playwright-core'
import { adminAuth, ADMIN, type TestApp } from '../helper.js'
import { chromiumInstalled, inCi, launchBrowser, makeUser, newPage, scrollsSideways, signIn, startService } from './browser.js'

// A browser on a busy shared machine, and a build of the page when dist/web lacks it: minutes.
t.setTimeout(600_000)

interface Group { _id: string, name: string, version: number, description: string, members: unknown[] }

async function createGroup (app: TestApp, name: string, extra: Record<string, unknown> = {}): Promise<{ group: Group, edit: string }> {
  const response = await app.inject({
    method: 'POST',
    url: '/studio/component-groups',
    headers: { authorization: adminAuth },
    payload: { componentGroup: { name, gbacRead: [], members: [], ...extra } }
  })
  if (response.statusCode !== 200) throw new Error(response.body)
  return { group: response.json().created as Group, edit: response.json().edit as string }
}

async function getGroup (app: TestApp, id: string): Promise<{ status: number, group: Group }> {
  const response = await app.inject({ url: `/studio/component-groups/${id}`, headers: { authorization: adminAuth } })
  return { status: response.statusCode, group: response.json() as Group }
}

const heading = (page: Page, text: string | RegExp) => page.getByRole('heading', { level: 1, name: text })

if (!chromiumInstalled()) {
  if (inCi) t.fail('The studio page tests need Debian\'s chromium at /usr/bin/chromium (.ci/run installs it)')
  else t.plan(0, 'skipped locally: /usr/bin/chromium is missing (apt-get install chromium)')
} else {
  t.test('the studio page', async (t) => {
    const { app, url } = await startService(t)
    const browser = await launchBrowser(t)
    const dana = await makeUser(app, 'dana', ['designer'], ['netops'])
    const rita = await makeUser(app, 'rita', [], ['netops'])

    t.test('an edit link followed while signed out: sign in, then the group it names; edit and save', async (t) => {
      const { group, edit } = await createGroup(app, 'Core routers', {
        members: [{ path: ['Network', 'Core'], type: 'folder' }, { path: '/Network/Core/Backup', type: 'component', sourceCollection: 'automations', ref: 'r1' }]
      })
      t.match(edit, /^\/studio\/#\/edit\?tab=0&component-group=[0-9a-f]{24}$/)
      const { page } = await newPage(t, browser)
      const dialogs: string[] = []
      page.on('dialog', (dialog) => { dialogs.push(dialog.message()); void dialog.dismiss() })
      await page.goto(url + edit)
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      t.equal(await page.getByLabel('Name', { exact: true }).count(), 0, 'no editor before signing in')
      await page.getByLabel('Username').fill(dana.username)
      await page.getByLabel('Password').fill('wrong password')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('alert').filter({ hasText: 'wrong username or password' }).waitFor()
      await signIn(page, dana)
      const name = page.getByLabel('Name', { exact: true })
      t.equal(await name.inputValue(), 'Core routers', 'the group the link named')
      t.match(page.url(), /#\/edit\?tab=0&component-group=/)
      await name.fill('Core routers (edited)')
      await page.getByLabel('Description').fill('<b>not HTML</b>')
      await page.getByLabel('Kind').selectOption('folder')
      await page.getByLabel('In folder').selectOption({ label: '/Network' })
      await page.getByLabel('Member name').fill('Edge')
      await page.getByRole('button', { name: 'Add member' }).click()
      await page.getByRole('button', { name: 'Rename component Network/Core/Backup' }).click()
      await page.getByLabel('New name for Backup').fill('Restore')
      await page.getByRole('button', { name: 'Apply' }).click()
      await page.getByLabel('Read groups').fill('netops, leads')
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('status').filter({ hasText: 'Saved: version 2.' }).waitFor()
      const saved = await getGroup(app, group._id)
      t.equal(saved.group.version, group.version + 1, 'the version went up by one')
      t.match(saved.group, {
        name: 'Core routers (edited)',
        description: '<b>not HTML</b>',
        gbacRead: ['netops', 'leads'],
        members: [{ path: ['Network', 'Core'] }, { path: '/Network/Core/Restore', sourceCollection: 'automations', ref: 'r1' }, { path: ['Network', 'Edge'] }]
      })
      await heading(page, /Core routers \(edited\)/).waitFor()
      t.equal(await page.locator('b').count(), 0, 'the description is text, never HTML')
      t.same(dialogs, [], 'no dialog of the browser\'s own')
      t.notOk(await scrollsSideways(page), 'no horizontal scroll at 1280x800')
    })

    t.test('someone else saved meanwhile: 409, said plainly, nothing overwritten, reload offered', async (t) => {
      const { group, edit } = await createGroup(app, 'Conflicted')
      const { page } = await newPage(t, browser)
      await page.goto(url + edit)
      await signIn(page, dana)
      await page.getByLabel('Description').fill('mine')
      const other = await app.inject({
        method: 'PUT',
        url: `/studio/component-groups/${group._id}`,
        headers: { authorization: adminAuth },
        payload: { update: { name: 'Conflicted', description: 'theirs', gbacRead: [], members: [] } }
      })
      t.equal(other.statusCode, 200)
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('alert').filter({ hasText: 'changed by someone else' }).waitFor()
      t.match(await getGroup(app, group._id), { group: { description: 'theirs', version: 2 } }, 'nothing overwritten')
      await page.getByRole('button', { name: 'Reload the latest version' }).click()
      await heading(page, /version 2/).waitFor()
      t.equal(await page.getByLabel('Description').inputValue(), 'theirs')
    })

    t.test('a user who may read but not write sees the group read-only', async (t) => {
      const { edit } = await createGroup(app, 'Read only here', { gbacRead: ['netops'], gbacWrite: ['leads'] })
      for (const user of [rita, dana]) {
        const { page } = await newPage(t, browser)
        await page.goto(url + edit)
        await signIn(page, user)
        await page.getByText('Read-only').waitFor()
        t.ok(await page.getByRole('button', { name: 'Save' }).isDisabled(), `${user.username}: Save disabled`)
        t.equal(await page.getByRole('button', { name: 'Delete' }).count(), 0)
        t.equal(await page.getByLabel('Name', { exact: true }).getAttribute('readonly'), '')
      }
    })

    t.test('a group that does not exist, or may not be read: not found', async (t) => {
      const { group } = await createGroup(app, 'Secret', { gbacRead: ['admins-only'] })
      const { page } = await newPage(t, browser)
      await page.goto(`${url}/studio/#/edit?tab=0&component-group=${'0'.repeat(24)}`)
      await signIn(page, dana)
      await heading(page, 'Component group not found').waitFor()
      await page.goto(`${url}/studio/#/edit?tab=0&component-group=${group._id}`)
      await page.reload()
      await heading(page, 'Component group not found').waitFor()
      t.pass('not found, as the API says')
    })

    t.test('the list: pages, search by name, sort by name, a new group', async (t) => {
      for (let i = 0; i < 23; i++) await createGroup(app, `Paged ${String(i).padStart(2, '0')}`)
      const { page } = await newPage(t, browser)
      await page.goto(`${url}/studio/`)
      await signIn(page, dana)
      await page.getByLabel('Search').fill('paged')
      await page.getByText('Page 1 of 2 (23 groups)').waitFor()
      t.equal(await page.getByRole('link', { name: /^Paged/ }).count(), 20)
      await page.getByRole('button', { name: 'Next page' }).click()
      await page.getByText('Page 2 of 2 (23 groups)').waitFor()
      t.same(await page.getByRole('link', { name: /^Paged/ }).allTextContents(), ['Paged 20', 'Paged 21', 'Paged 22'])
      await page.getByRole('button', { name: /^Sort by name/ }).click()
      await page.locator('tbody tr').first().filter({ hasText: 'Paged 22' }).waitFor()
      t.same((await page.getByRole('link', { name: /^Paged/ }).allTextContents()).slice(0, 3), ['Paged 22', 'Paged 21', 'Paged 20'], 'Z to A')
      await page.getByText('Page 1 of 2 (23 groups)').waitFor()
      await page.getByLabel('Search').fill('no such group')
      await page.getByText('No component groups whose name contains "no such group".').waitFor()
      await page.getByRole('button', { name: 'New component group' }).click()
      await page.getByLabel('Name', { exact: true }).fill('Made in the browser')
      await page.getByRole('button', { name: 'Create' }).click()
      await heading(page, /Made in the browser/).waitFor()
      t.match(page.url(), /#\/edit\?tab=0&component-group=[0-9a-f]{24}$/)
      t.equal(await page.getByRole('tab', { name: 'Editor' }).getAttribute('aria-selected'), 'true')
    })

    t.test('history: newest first, a version against the current one, restore', async (t) => {
      const { group } = await createGroup(app, 'With history', { description: 'first' })
      await app.inject({
        method: 'PUT',
        url: `/studio/component-groups/${group._id}`,
        headers: { authorization: adminAuth },
        payload: { update: { name: 'With history', description: 'second', gbacRead: [], members: [{ path: ['Added'] }] } }
      })
      const { page } = await newPage(t, browser)
      await page.goto(`${url}/studio/#/edit?tab=1&component-group=${group._id}`)
      await signIn(page, dana)
      const versions = page.getByRole('list', { name: 'Versions, newest first' }).getByRole('button')
      await versions.first().waitFor()
      t.match(await versions.allTextContents(), [/^Version 2: replace by admin/, /^Version 1: create by admin/])
      await versions.nth(1).click()
      const diff = page.getByRole('article', { name: 'Version 1' })
      await diff.getByText('“second” → “first”').waitFor()
      await diff.getByText('−/Added/ (folder)').waitFor()
      await page.getByRole('button', { name: 'Restore' }).click()
      await page.getByRole('status').filter({ hasText: 'Version 1 restored as version 3.' }).waitFor()
      t.match(await getGroup(app, group._id), { group: { version: 3, description: 'first', members: [] } })
      await versions.filter({ hasText: 'Version 3: restore by dana' }).waitFor()
      await page.getByRole('tab', { name: 'Editor' }).click()
      t.equal(await page.getByLabel('Description').inputValue(), 'first')
    })

    t.test('delete asks first; admins see the deleted group and restore it', async (t) => {
      const { group, edit } = await createGroup(app, 'To delete')
      const { page } = await newPage(t, browser)
      await page.goto(url + edit)
      await signIn(page, dana)
      await page.getByRole('button', { name: 'Delete' }).click()
      await page.getByRole('alertdialog').waitFor()
      await page.getByRole('button', { name: 'Cancel' }).last().click()
      t.equal((await getGroup(app, group._id)).status, 200, 'cancelled: still there')
      await page.getByRole('button', { name: 'Delete' }).click()
      await page.getByRole('button', { name: 'Yes, delete' }).click()
      await heading(page, 'Component groups').waitFor()
      t.equal((await getGroup(app, group._id)).status, 404, 'deleted')
      t.equal(await page.getByRole('button', { name: 'Deleted groups' }).count(), 0, 'not for a designer')

      const admin = await newPage(t, browser)
      await admin.page.goto(`${url}/studio/`)
      await signIn(admin.page, ADMIN)
      await admin.page.getByRole('button', { name: 'Deleted groups' }).click()
      await admin.page.getByRole('button', { name: 'Restore To delete' }).click()
      await admin.page.getByRole('status').filter({ hasText: 'Restored "To delete" as version 3.' }).waitFor()
      t.match(await getGroup(app, group._id), { status: 200, group: { version: 3, name: 'To delete' } })
    })

    t.test('phone width (390x844): no horizontal scroll, every control reachable', async (t) => {
      const { group } = await createGroup(app, 'A group with a rather long name to wrap on a phone screen', {
        description: 'x'.repeat(300),
        members: [{ path: '/A/very/deep/path/of/folders/with/a/component', sourceCollection: 'automations', ref: 'r1' }]
      })
      const { page } = await newPage(t, browser, { width: 390, height: 844 })
      await page.goto(`${url}/studio/`)
      await signIn(page, dana)
      await page.getByRole('link', { name: /rather long name/ }).waitFor()
      t.notOk(await scrollsSideways(page), 'the list')
      await page.getByRole('link', { name: /rather long name/ }).click()
      await page.getByLabel('Name', { exact: true }).waitFor()
      t.notOk(await scrollsSideways(page), 'the editor')
      await page.goto(`${url}/studio/#/edit?tab=1&component-group=${group._id}`)
      await page.getByRole('button', { name: /^Version 1/ }).click()
      await page.getByRole('article', { name: 'Version 1' }).waitFor()
      t.notOk(await scrollsSideways(page), 'the history')
    })

    t.test('by keyboard alone: sign in, open a group, save', async (t) => {
      const { group } = await createGroup(app, 'Keyboard')
      const { page } = await newPage(t, browser)
      await page.goto(`${url}/studio/#/edit?tab=0&component-group=${group._id}`)
      await page.getByLabel('Username').waitFor()
      await page.keyboard.press('Tab')
      t.equal(await page.evaluate('document.activeElement.id'), 'username')
      await page.keyboard.type(dana.username)
      await page.keyboard.press('Tab')
      await page.keyboard.type(dana.password)
      await page.keyboard.press('Enter')
      await page.getByLabel('Description').focus()
      await page.keyboard.type('typed')
      await page.keyboard.press('Enter')
      t.match(await getGroup(app, group._id), { group: { version: 1 } }, 'Enter in a textarea is a new line, not a save')
      await page.getByLabel('Name', { exact: true }).focus()
      await page.keyboard.press('Enter')
      await page.getByRole('status').filter({ hasText: 'Saved: version 2.' }).waitFor()
      t.match(await getGroup(app, group._id), { group: { version: 2, description: 'typed\n' } })
    })

    t.test('an API error and a network failure are shown', async (t) => {
      const { edit } = await createGroup(app, 'Errors shown')
      await createGroup(app, 'Taken name')
      const { page } = await newPage(t, browser)
      await page.goto(url + edit)
      await signIn(page, dana)
      await page.getByLabel('Name', { exact: true }).fill('Taken name')
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('alert').filter({ hasText: /Taken name/ }).waitFor()
      await page.route('**/studio/component-groups/**', async (route) => { await route.abort('connectionrefused') })
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('alert').filter({ hasText: 'could not be reached' }).waitFor()
      t.pass('both shown')
    })
  })
}
