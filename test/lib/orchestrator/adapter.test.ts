import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { MAX_BASE_URL_LENGTH, checkBaseUrl, checkCaBundle, splitBaseUrl, upstreamPath } from '../../../lib/orchestrator/adapter.js'

t.test('checkBaseUrl accepts http(s) URLs and normalises them', async (t) => {
  const table: Array<[string, string]> = [
    ['http://nso:8080', 'http://nso:8080'],
    ['http://nso:8080/', 'http://nso:8080'],
    ['https://NSO.example.net:8888/', 'https://nso.example.net:8888'],
    ['http://nso:80/prefix', 'http://nso/prefix'],
    ['https://nso:443/prefix/', 'https://nso/prefix'],
    ['http://nso:8080/a/b//', 'http://nso:8080/a/b'],
    ['http://127.0.0.1:8080/prefix', 'http://127.0.0.1:8080/prefix'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    ['http://nso/a%20b', 'http://nso/a%20b']
  ]
  for (const [input, expected] of table) t.same(checkBaseUrl(input), { ok: true, value: expected }, input)
})

t.test('checkBaseUrl rejects other schemes, credentials, queries and fragments without echoing the value', async (t) => {
  const table: Array<[string, string]> = [
    ['ftp://nso/', 'must use http or https'],
    ['file:///etc/passwd', 'must use http or https'],
    ['javascript:alert(1)', 'must use http or https'],
    ['nso:8080', 'must use http or https'],
    ['/restconf', 'absolute http or https URL'],
    ['http://', 'absolute http or https URL'],
    ['', 'absolute http or https URL'],
    ['http://admin:s3cret@nso:8080', 'must not carry credentials'],
    ['http://admin@nso:8080', 'must not carry credentials'],
    ['http://nso:8080/?x=1', "query ('?')"],
    ['http://nso:8080/?', "query ('?')"],
    ['http://nso:8080/#top', "fragment ('#')"],
    ['http://nso:8080#', "fragment ('#')"],
    ['http://nso:8080/a b', 'spaces or control characters'],
    ['http://nso:8080/\r\nHost: x', 'spaces or control characters'],
    [' http://nso', 'spaces or control characters'],
    ['http:\\\\nso\\x', 'backslash'],
    ['http://nso/' + 'a'.repeat(MAX_BASE_URL_LENGTH), `at most ${MAX_BASE_URL_LENGTH}`]
  ]
  for (const [input, reason] of table) {
    const result = checkBaseUrl(input)
    t.equal(result.ok, false, JSON.stringify(input))
    if (!result.ok) {
      t.ok(result.reason.startsWith('baseUrl '), result.reason)
      t.ok(result.reason.includes(reason), `${JSON.stringify(input)}: ${result.reason}`)
      t.notOk(result.reason.includes('s3cret'), 'never echoes the URL')
    }
  }
  t.same(checkBaseUrl('ftp://x', 'body/baseUrl'), { ok: false, reason: 'body/baseUrl must use http or https' })
})

t.test('the upstream target joins the base path and the relay path', async (t) => {
  const table: Array<[string, string, string, string]> = [
    ['http://nso:8080', '/restconf/data', 'http://nso:8080', '/restconf/data'],
    ['http://nso:8080/prefix', '/restconf/data', 'http://nso:8080', '/prefix/restconf/data'],
    ['http://nso:8080/a/b', '/api/running/devices?deep', 'http://nso:8080', '/a/b/api/running/devices?deep'],
    ['https://nso/prefix', '/', 'https://nso', '/prefix/'],
    ['http://nso:8080', '/', 'http://nso:8080', '/']
  ]
  for (const [baseUrl, relayPath, origin, target] of table) {
    const checked = checkBaseUrl(baseUrl)
    t.ok(checked.ok)
    if (!checked.ok) continue
    const base = splitBaseUrl(checked.value)
    t.equal(base.origin, origin, `${baseUrl} origin`)
    t.equal(upstreamPath(base, relayPath), target, `${baseUrl} + ${relayPath}`)
  }
})

const run = promisify(execFile)

t.test('checkCaBundle accepts PEM certificates and rejects anything else', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ca-test-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const certs: string[] = []
  for (const name of ['a', 'b']) {
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', `/CN=${name}`, '-keyout', path.join(dir, `${name}.key`), '-out', path.join(dir, `${name}.pem`)])
    certs.push(await readFile(path.join(dir, `${name}.pem`), 'utf8'))
  }
  const bundle = `# lab CAs\n${certs.join('\n')}`
  t.same(checkCaBundle(certs[0] as string), { ok: true, value: certs[0] })
  t.same(checkCaBundle(bundle), { ok: true, value: bundle })

  const broken = (certs[1] as string).replace(/\n[A-Za-z0-9+/]{10}/, '\n!!!!!!!!!!')
  const table: Array<[string, string]> = [
    ['', 'at least one PEM certificate'],
    ['not a certificate', 'at least one PEM certificate'],
    ['-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----', 'at least one PEM certificate'],
    ['-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----', 'certificate 1 is not a valid'],
    [`${certs[0] as string}\n${broken}`, 'certificate 2 is not a valid']
  ]
  for (const [input, reason] of table) {
    const result = checkCaBundle(input)
    t.equal(result.ok, false)
    if (!result.ok) t.ok(result.reason.startsWith('ca ') || result.reason.startsWith('ca:'), result.reason)
    if (!result.ok) t.ok(result.reason.includes(reason), result.reason)
  }
})
