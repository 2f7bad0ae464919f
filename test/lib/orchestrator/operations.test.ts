// The NSO Manager operations' request builders and answer readers, on NSO's recorded answers
// (the DevNet sandbox collection's 5.3 answers, the NSO guide's 6.x outputs).
import t from 'tap'
import {
  actionOutput, addLockBody, applyTemplateBody, deviceList, devicePath, encodeKey, execAnyPath, filterNames, listLeaves, mapBounded,
  nedIdOf, sortedUnique, statsModuleOf, templateProblem, xpathLiteral
} from '../../../lib/orchestrator/operations.js'

// NSO 5.3, GET .../device=dist-rtr02 (an excerpt of the recorded answer).
const RECORDED_DEVICE = {
  'tailf-ncs:device': [{
    name: 'dist-rtr02',
    address: '10.10.20.176',
    authgroup: 'labadmin',
    'device-type': { cli: { 'ned-id': 'cisco-ios-cli-6.44:cisco-ios-cli-6.44', protocol: 'ssh' } },
    state: { 'oper-state': 'enabled', 'admin-state': 'unlocked' }
  }]
}

t.test('device names become one percent-encoded key, "/" and "," included', async (t) => {
  t.equal(devicePath('ce0'), '/restconf/data/tailf-ncs:devices/device=ce0')
  t.equal(encodeKey('core/rtr 1,a=b'), 'core%2Frtr%201%2Ca%3Db')
  t.equal(encodeKey("it's(x)*!"), 'it%27s%28x%29%2A%21')
  t.equal(encodeKey('zürich'), 'z%C3%BCrich')
  t.equal(execAnyPath('a/b', 'tailf-ned-cisco-ios-stats'), '/restconf/data/tailf-ncs:devices/device=a%2Fb/live-status/tailf-ned-cisco-ios-stats:exec/any')
})

t.test('lists: the key leaf of each entry; empty for NSO\'s bodiless 204', async (t) => {
  t.same(listLeaves(RECORDED_DEVICE, 'device', 'name'), ['dist-rtr02'])
  t.same(listLeaves({ 'tailf-ncs:ned-id': [{ id: 'a' }, { id: 'b' }, {}] }, 'ned-id', 'id'), ['a', 'b'])
  t.same(listLeaves(undefined, 'device', 'name'), [])
  t.same(listLeaves({ 'tailf-ncs:device': { name: 'x' } }, 'device', 'name'), [], 'not a list: nothing')
  t.same(filterNames(['ce1', 'CE0', 'pe0', 'ce1', 'xce'], 'Ce'), ['CE0', 'ce1', 'xce'])
  t.same(sortedUnique(['b', 'a', 'b']), ['a', 'b'])
})

t.test('NEDs: the NED id and its live-status module, XR and NX-OS before IOS', async (t) => {
  const ned = nedIdOf({ 'tailf-ncs:device-type': RECORDED_DEVICE['tailf-ncs:device'][0]?.['device-type'] ?? {} })
  t.equal(ned, 'cisco-ios-cli-6.44:cisco-ios-cli-6.44')
  t.equal(statsModuleOf(ned ?? ''), 'tailf-ned-cisco-ios-stats')
  t.equal(statsModuleOf('cisco-iosxr-cli-7.38:cisco-iosxr-cli-7.38'), 'tailf-ned-cisco-ios-xr-stats')
  t.equal(statsModuleOf('cisco-ios-xr-id:cisco-ios-xr'), 'tailf-ned-cisco-ios-xr-stats')
  t.equal(statsModuleOf('cisco-nx-cli-5.23:cisco-nx-cli-5.23'), 'tailf-ned-cisco-nx-stats')
  t.equal(statsModuleOf('cisco-nx-id:cisco-nx'), 'tailf-ned-cisco-nx-stats')
  t.equal(statsModuleOf('ios-id:cisco-ios'), 'tailf-ned-cisco-ios-stats')
  t.equal(statsModuleOf('cisco-asa-cli-6.16:cisco-asa-cli-6.16'), 'tailf-ned-cisco-asa-stats')
  t.equal(statsModuleOf('juniper-junos-nc-4.6:juniper-junos-nc-4.6'), undefined)
  t.equal(nedIdOf({ 'tailf-ncs:device-type': { netconf: { 'ned-id': 'juniper-junos-nc-4.6:juniper-junos-nc-4.6' } } }), 'juniper-junos-nc-4.6:juniper-junos-nc-4.6')
  t.equal(nedIdOf({}), undefined)
})

t.test('action outputs, and apply-template\'s results of NSO 6.x', async (t) => {
  t.same(actionOutput({ 'tailf-ncs:output': { result: true, info: 'connected' } }), { result: true, info: 'connected' })
  t.equal(actionOutput(undefined), undefined, 'NSO 5.x apply-template: 204, no output')
  t.equal(templateProblem(undefined), undefined)
  t.equal(templateProblem({ 'apply-template-result': [{ device: 'xe', result: 'ok' }] }), undefined)
  t.equal(templateProblem({ 'apply-template-result': [{ device: 'nx', result: 'no-namespace', info: 'No matching namespaces found for device: nx.' }] }),
    'no-namespace: No matching namespaces found for device: nx.')
})

t.test('template variables are XPath string literals, whatever quotes they hold', async (t) => {
  t.equal(xpathLiteral('10.0.0.1'), "'10.0.0.1'")
  t.equal(xpathLiteral("it's"), '"it\'s"')
  t.equal(xpathLiteral('a\'b"c'), 'concat(\'a\', "\'", \'b"c\')')
  t.equal(xpathLiteral(''), "''")
  t.same(JSON.parse(applyTemplateBody('ntp', { S: 'x', N: 2, B: true })), {
    input: { 'template-name': 'ntp', variable: [{ name: 'S', value: "'x'" }, { name: 'N', value: "'2'" }, { name: 'B', value: "'true'" }] }
  })
  t.same(JSON.parse(applyTemplateBody('ntp')), { input: { 'template-name': 'ntp' } })
})

t.test('add-lock: block-others is an empty leaf, present only when true', async (t) => {
  t.same(JSON.parse(addLockBody(['a'], true)), { input: { device: ['a'], 'block-others': [null] } })
  t.same(JSON.parse(addLockBody(['a', 'b'], false)), { input: { device: ['a', 'b'] } })
  t.same(deviceList('a'), ['a'])
  t.same(deviceList(['b', 'a', 'b']), ['b', 'a'])
})

t.test('mapBounded: at most `limit` at once, results in order', async (t) => {
  let running = 0
  let most = 0
  const results = await mapBounded([5, 1, 4, 2, 3], 2, async (n) => {
    running++
    most = Math.max(most, running)
    await new Promise((resolve) => setImmediate(resolve))
    running--
    return n * 10
  })
  t.same(results, [50, 10, 40, 20, 30])
  t.equal(most, 2)
  t.same(await mapBounded([], 4, async () => 1), [])
})
