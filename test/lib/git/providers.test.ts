import t from 'tap'
import { DEFAULT_TIMEOUT_MS, DEFAULT_TOKEN_USERNAME, findProvider, parseGitProviders, repoKey, type GitProviders } from '../../../lib/git/providers.js'
import { ConfigError, loadConfig } from '../../../plugins/core/config.js'

const TOKEN = 'ghp_TopSecretValue123'

function parsed (json: string | undefined): GitProviders {
  const result = parseGitProviders(json)
  if (!result.ok) throw new Error(result.reason)
  return result.value
}

t.test('GitHub and GitLab exist by default, as public hosts without credentials', async (t) => {
  const providers = parsed(undefined)
  t.same([...providers.values()], [
    { name: 'GitHub', url: 'https://github.com', timeoutMs: DEFAULT_TIMEOUT_MS },
    { name: 'GitLab', url: 'https://gitlab.com', timeoutMs: DEFAULT_TIMEOUT_MS }
  ])
  t.equal(findProvider(providers, 'github')?.name, 'GitHub')
  t.equal(findProvider(providers, 'GITLAB')?.name, 'GitLab')
  t.equal(findProvider(providers, 'Bitbucket'), undefined)
  t.same([...parsed('{}').keys()], ['github', 'gitlab'], 'an empty object keeps the defaults')
})

t.test('configured providers: credentials, a new name, a default replaced case-insensitively', async (t) => {
  const providers = parsed(JSON.stringify({
    github: { url: 'https://github.com/', username: 'bot', token: TOKEN },
    GitLab: { url: 'https://gitlab.example.com/scm', token: TOKEN, timeoutMs: 5000 },
    'Corp-Git.2': { url: 'http://10.0.0.5:8080' }
  }))
  t.same(findProvider(providers, 'GitHub'), { name: 'github', url: 'https://github.com', username: 'bot', token: TOKEN, timeoutMs: DEFAULT_TIMEOUT_MS })
  t.same(findProvider(providers, 'gitlab'), { name: 'GitLab', url: 'https://gitlab.example.com/scm', username: DEFAULT_TOKEN_USERNAME, token: TOKEN, timeoutMs: 5000 })
  t.same(findProvider(providers, 'corp-git.2'), { name: 'Corp-Git.2', url: 'http://10.0.0.5:8080', timeoutMs: DEFAULT_TIMEOUT_MS })
  t.equal(providers.size, 3)
})

t.test('bad GIT_PROVIDERS: a reason naming the variable and the field, never a value', async (t) => {
  const cases: Array<[string, RegExp]> = [
    [`{"GitHub": {"url": "https://github.com", "token": "${TOKEN}"`, /^GIT_PROVIDERS is not valid JSON$/],
    [`["${TOKEN}"]`, /^GIT_PROVIDERS must be a JSON object/],
    ['"text"', /^GIT_PROVIDERS must be a JSON object/],
    ['null', /^GIT_PROVIDERS must be a JSON object/],
    [JSON.stringify({ 'bad name': { url: 'https://x' } }), /^GIT_PROVIDERS provider names must be/],
    [JSON.stringify({ '': { url: 'https://x' } }), /^GIT_PROVIDERS provider names must be/],
    [JSON.stringify({ A: { url: 'https://a' }, a: { url: 'https://b' } }), /^GIT_PROVIDERS names provider "a" twice/],
    [JSON.stringify({ A: TOKEN }), /^GIT_PROVIDERS provider "A" must be an object/],
    [JSON.stringify({ A: [TOKEN] }), /^GIT_PROVIDERS provider "A" must be an object/],
    [JSON.stringify({ A: { url: 'https://a', password: TOKEN } }), /^GIT_PROVIDERS provider "A" has an unknown field "password"$/],
    [JSON.stringify({ A: { token: TOKEN } }), /^GIT_PROVIDERS provider "A" needs "url"/],
    [JSON.stringify({ A: { url: `not a url ${TOKEN}` } }), /^GIT_PROVIDERS provider "A": "url" is not a valid URL$/],
    [JSON.stringify({ A: { url: 'ftp://a' } }), /"url" must be http or https$/],
    [JSON.stringify({ A: { url: `https://bot:${TOKEN}@github.com` } }), /"url" must not contain credentials; set "username" and "token" instead$/],
    [JSON.stringify({ A: { url: `https://${TOKEN}@github.com` } }), /"url" must not contain credentials/],
    [JSON.stringify({ A: { url: `https://github.com/?token=${TOKEN}` } }), /"url" must not have a query or fragment$/],
    [JSON.stringify({ A: { url: 'https://github.com/#x' } }), /"url" must not have a query or fragment$/],
    [JSON.stringify({ A: { url: 'https://github.com/?' } }), /"url" must not have a query or fragment$/],
    [JSON.stringify({ A: { url: 'https://a', username: 'a:b', token: TOKEN } }), /"username" must be a non-empty string without ':'/],
    [JSON.stringify({ A: { url: 'https://a', username: '', token: TOKEN } }), /"username" must be/],
    [JSON.stringify({ A: { url: 'https://a', username: 7 } }), /"username" must be/],
    [JSON.stringify({ A: { url: 'https://a', token: `${TOKEN}\n` } }), /"token" must be a non-empty string without control characters$/],
    [JSON.stringify({ A: { url: 'https://a', token: '' } }), /"token" must be/],
    [JSON.stringify({ A: { url: 'https://a', token: 12345 } }), /"token" must be/],
    [JSON.stringify({ A: { url: 'https://a', timeoutMs: 10 } }), /"timeoutMs" must be an integer from 100 to 600000$/],
    [JSON.stringify({ A: { url: 'https://a', timeoutMs: 1.5 } }), /"timeoutMs" must be/],
    [JSON.stringify({ A: { url: 'https://a', timeoutMs: '1000' } }), /"timeoutMs" must be/]
  ]
  for (const [json, reason] of cases) {
    const result = parseGitProviders(json)
    t.notOk(result.ok, json.slice(0, 60))
    if (result.ok) continue
    t.match(result.reason, reason)
    t.notOk(result.reason.includes(TOKEN), 'the token is not repeated')
  }
})

t.test('loadConfig parses GIT_PROVIDERS once at start and stops on a bad one', async (t) => {
  const config = loadConfig({ GIT_PROVIDERS: JSON.stringify({ Internal: { url: 'https://git.example.com', token: TOKEN } }) })
  t.equal(findProvider(config.gitProviders, 'internal')?.token, TOKEN)
  t.equal(findProvider(config.gitProviders, 'github')?.url, 'https://github.com')
  t.equal(loadConfig({ GIT_PROVIDERS: '' }).gitProviders.size, 2, 'empty means unset')

  const bad = `{"GitHub": {"url": "https://bot:${TOKEN}@github.com"}}`
  let error: unknown
  try {
    loadConfig({ GIT_PROVIDERS: bad })
  } catch (err) {
    error = err
  }
  t.ok(error instanceof ConfigError, 'a ConfigError: the server prints it and exits')
  if (error instanceof ConfigError) {
    t.match(error.message, /^Invalid configuration: GIT_PROVIDERS provider "GitHub": "url" must not contain credentials/)
    t.notOk(error.message.includes(TOKEN))
  }
})

t.test('caseSensitive: absent by default (providers match repository paths without regard to case), true when configured', async (t) => {
  const providers = parsed(JSON.stringify({ Plain: { url: 'https://git.example.com', caseSensitive: true }, Other: { url: 'https://o', caseSensitive: false } }))
  const plain = findProvider(providers, 'plain')
  const github = findProvider(providers, 'github')
  t.equal(plain?.caseSensitive, true)
  t.equal(findProvider(providers, 'other')?.caseSensitive, undefined)
  t.equal(github?.caseSensitive, undefined)
  t.equal(repoKey(github!, 'NetOps/Automation'), 'netops/automation', 'one key for every spelling')
  t.equal(repoKey(plain!, 'NetOps/Automation'), 'NetOps/Automation')
  const refused = parseGitProviders(JSON.stringify({ A: { url: 'https://a', caseSensitive: 'yes' } }))
  t.match(refused, { ok: false, reason: /"caseSensitive" must be true or false$/ })
})
