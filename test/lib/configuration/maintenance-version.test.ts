import t from 'tap'
import { isMaintenanceBundle, parseBundleVersion } from '../../../lib/configuration/maintenance-version.js'

t.test('maintenance bundles by version', async (t) => {
  const table: Array<[string, boolean]> = [
    ['3.102.0-2023.1.38', true],
    ['2023.2.3', true],
    ['2023.2.0', false],
    ['1.4.0', false],
    ['3.102.0-2023.1.0', false],
    ['6.0.0-2024.3.1', true],
    ['  2023.2.1  ', true],
    ['2023.2', false],
    ['', false],
    ['v2023.2.3', false],
    ['2023.2.3-rc', false],
    ['3.102.0-2023.1.x', false]
  ]
  for (const [version, expected] of table) {
    t.equal(isMaintenanceBundle(version), expected, `${JSON.stringify(version)} -> ${expected}`)
  }
})

t.test('the override wins over the version', async (t) => {
  t.equal(isMaintenanceBundle('2023.2.0', true), true)
  t.equal(isMaintenanceBundle('2023.2.3', false), false)
})

t.test('parses the bundle triple', async (t) => {
  t.same(parseBundleVersion('3.102.0-2023.1.38'), { year: 2023, feature: 1, maintenance: 38 })
  t.same(parseBundleVersion('2023.2.0'), { year: 2023, feature: 2, maintenance: 0 })
  t.equal(parseBundleVersion('not-a-version'), undefined)
})
