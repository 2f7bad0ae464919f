// Repository, branch and project path checks. Long: a table per rule, and property tests against git itself.
import t from 'tap'
import fc from 'fast-check'
import git from 'isomorphic-git'
import fs from 'node:fs'
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import {
  branchRef,
  MAX_BRANCH_NAME_BYTES,
  MAX_PROJECT_PATH_BYTES,
  MAX_REPO_PATH_LENGTH,
  parseAllowedSpecialPaths,
  repoRemoteUrl,
  cacheDirName,
  validateBranchName,
  validateProjectPath,
  validateRepoPath,
} from '../../../lib/git/paths.js'
import { propertyRuns } from '../../helpers/property-runs.js'

const execFileAsync = promisify(execFile)

t.test('projectPath: accepted and normalised', async (t) => {
  const good: Array<[string, string]> = [
    ['project.json', 'project.json'],
    ['projects/site-a/core.json', 'projects/site-a/core.json'],
    ['a/b/c/d/e.json', 'a/b/c/d/e.json'],
    ['.gitignore', '.gitignore'],
    ['github/workflows/ci.yml', 'github/workflows/ci.yml'],
    ['x/.github/y.json', 'x/.github/y.json'],
    ['x/.gitmodules', 'x/.gitmodules'],
    ['git~x/a~b.json', 'git~x/a~b.json'],
    ['console.json', 'console.json'],
    ['emoji \u{1F600}.json', 'emoji \u{1F600}.json'],
    ['docs/.git-notes', 'docs/.git-notes'],
    ['gitx/.gitkeep', 'gitx/.gitkeep'],
    ['a..b/c', 'a..b/c'],
    ['%2e%2e/x', '%2e%2e/x'], // still encoded: a literal file name, not a parent reference
    ['with space/ünïcode €.json', 'with space/ünïcode €.json'],
    ['C/x', 'C/x'],
    ['cafe\u0301.json', 'caf\u00e9.json'], // NFD becomes NFC
    // Exactly at the byte limit, every segment within NAME_MAX.
    [Array(5).fill('x'.repeat(204)).join('/'), Array(5).fill('x'.repeat(204)).join('/')],
  ]
  for (const [input, expected] of good) {
    const r = validateProjectPath(input)
    t.ok(r.ok, `accepts ${JSON.stringify(input.slice(0, 40))}`)
    if (r.ok) t.equal(r.value, expected)
  }
  const long = validateProjectPath('a/'.repeat(300) + 'b')
  t.ok(long.ok, 'many short segments within the byte limit')
})

t.test('projectPath: rejected with a reason', async (t) => {
  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['/etc/passwd', /relative/],
    ['/x', /relative/],
    ['C:\\x', /'\\'/],
    ['C:/x', /relative/],
    ['c:project.json', /relative/],
    ['\\x', /'\\'/],
    ['\\\\server\\share', /'\\'/],
    ['a\\b', /'\\'/],
    ['a\\..\\b', /'\\'/],
    ['..', /'\.\.'/],
    ['../x', /'\.\.'/],
    ['a/../../b', /'\.\.'/],
    ['a/..', /'\.\.'/],
    ['a/b/../c', /'\.\.'/],
    ['./x', /'\.' segments/],
    ['a/./b', /'\.' segments/],
    ['.', /'\.' segments/],
    ['a//b', /empty segments/],
    ['a/', /empty segments/],
    ['a/b/', /empty segments/],
    ['.git', /'\.git'/],
    ['.git/config', /'\.git'/],
    ['.git/hooks/pre-commit', /'\.git'/],
    ['.Git/hooks/x', /'\.git'/],
    ['.GIT/HEAD', /'\.git'/],
    ['sub/.git/config', /'\.git'/],
    ['.git./config', /'\.git'/],
    ['.git /config', /'\.git'/],
    ['a\u0000b', /control/],
    ['a\nb', /control/],
    ['a\rb', /control/],
    ['a\tb', /control/],
    ['a\u001bb', /control/],
    ['a\u007fb', /control/],
    ['a\u0085b', /control/],
    ['a\ud800b', /Unicode/],
    ['x'.repeat(MAX_PROJECT_PATH_BYTES + 1), /at most 1024 bytes/],
    ['é'.repeat(MAX_PROJECT_PATH_BYTES / 2 + 1), /at most 1024 bytes/],
    ['x'.repeat(256) + '/y', /segments must be at most 255 bytes/],
    // Other names of `.git` on NTFS and HFS+, and what Windows refuses (git's verify_path).
    ['GIT~1/hooks/post-checkout', /NTFS short name/],
    ['git~1/x', /NTFS short name/],
    ['.git~1', /NTFS short name/],
    ['GI7EBA~1', /NTFS short name/],
    ['a/PROGRA~1.TXT', /NTFS short name/],
    ['.git::$INDEX_ALLOCATION/hooks/x', /':'/],
    ['.git:x', /':'/],
    ['c-:/x', /':'/],
    ['a<b', /'<'/],
    ['a>b', /'>'/],
    ['a"b', /'"'/],
    ['a|b', /'\|'/],
    ['a?b', /'\?'/],
    ['a*b', /'\*'/],
    ['a./b', /end with '\.'/],
    ['...', /end with '\.'/],
    ['a /b', /end with '\.' or a space/],
    ['x/b.', /end with '\.'/],
    ['CON', /device name/],
    ['dir/nul.json', /device name/],
    ['Com1.txt', /device name/],
    ['lpt\u00b9', /device name/],
    ['CONOUT$', /device name/],
    ['.g\u200cit/config', /invisible/],
    ['\ufeff.git/config', /invisible/],
    ['.git\u200d/hooks/x', /invisible/],
    ['.\u206agit/x', /invisible/],
    ['a\u202eb.json', /invisible/],
    ['a\u2066b', /invisible/],
    ['a\u061cb', /invisible/],
    ['a\u200bb', /invisible/],
    // Special paths, refused unless an operator allows them.
    ['.gitmodules', /'\.gitmodules'/],
    ['.GitModules', /'\.gitmodules'/],
    ['.github/workflows/ci.yml', /'\.github'/],
    ['.GITHUB/x', /'\.github'/],
    ['.gitlab-ci.yml', /'\.gitlab-ci\.yml'/],
  ]
  for (const [input, reason] of bad) {
    const r = validateProjectPath(input)
    t.notOk(r.ok, `rejects ${JSON.stringify(input.slice(0, 40))}`)
    if (!r.ok) {
      t.match(r.reason, reason)
      t.match(r.reason, /^projectPath /, 'reason names the field')
    }
  }
})

// Names where the CLI and this module must agree, checked against `git check-ref-format --branch`.
const GOOD_BRANCHES = [
  'main',
  'master',
  'feature/x',
  'release-1.2',
  'release/2024.1.0',
  'user/jdoe/fix_123',
  'a./b',
  'x-',
  'a@b',
  '@a',
  'a/@',
  'a{b}',
  'HEADx/y',
  'x/heading',
  'ahead',
  'FETCH_HEADS',
  'my_head',
  'origins/main',
  'x/origin/main',
  'a.lockx',
  'lock',
  'ünïcode',
  '#1',
  'a'.repeat(MAX_BRANCH_NAME_BYTES),
]
const BAD_BRANCHES: Array<[string, RegExp]> = [
  ['', /empty/],
  ['bad..name', /'\.\.'/],
  ['..', /'\.\.'/],
  ['x.lock', /\.lock/],
  ['a.lock/b', /\.lock/],
  ['a/b.lock', /\.lock/],
  ['-x', /start with '-'/],
  ['--force', /start with '-'/],
  ['a b', /spaces/],
  [' main', /spaces/],
  ['a@{b', /'@\{'/],
  ['@{-1}', /'@\{'/],
  ['main@{upstream}', /'@\{'/],
  ['HEAD', /'HEAD'/],
  ['a~1', /'~'/],
  ['a^', /'\^'/],
  ['a:b', /':'/],
  ['a?', /'\?'/],
  ['a*', /'\*'/],
  ['a[b', /'\['/],
  ['a\\b', /'\\'/],
  ['a\u0000b', /control/],
  ['a\tb', /control/],
  ['a\nb', /control/],
  ['a\u007fb', /control/],
  ['/a', /'\/'/],
  ['a/', /'\/'/],
  ['a//b', /'\/'/],
  ['foo.', /end with '\.'/],
  ['a/b.', /end with '\.'/],
  ['.', /end with '\.'/],
  ['.a', /start with '\.'/],
  ['a/.b', /start with '\.'/],
  ['.lock', /start with '\.'|\.lock/],
]
// Refused here although git accepts them outside a repository: `@` alone means HEAD in revision
// syntax, and a name longer than a filesystem name cannot be stored as a loose ref.
const STRICTER_THAN_GIT: Array<[string, RegExp]> = [
  ['@', /'@'/],
  ['refs/heads/x', /'refs\/'/],
  ['refs/x', /'refs\/'/],
  ['a\u202eb', /invisible/],
  ['\ufeffmain', /invisible/],
  ['ma\u200bin', /invisible/],
  ['a'.repeat(MAX_BRANCH_NAME_BYTES + 1), /at most 255 bytes/],
  // Names Git or the cache reserves: the cache's own refs/remotes/origin/HEAD, Git's pseudo-refs.
  ['HEAD/x', /'HEAD' as a segment/],
  ['x/HEAD', /'HEAD' as a segment/],
  ['a/head/b', /'head' as a segment/],
  ['FETCH_HEAD', /'FETCH_HEAD' as a segment/],
  ['ORIG_HEAD', /'ORIG_HEAD' as a segment/],
  ['MERGE_HEAD', /'MERGE_HEAD' as a segment/],
  ['CHERRY_PICK_HEAD', /'CHERRY_PICK_HEAD'/],
  ['x/REBASE_HEAD/y', /'REBASE_HEAD'/],
  ['AUTO_MERGE', /reserves/],
  ['MERGE_AUTOSTASH', /reserves/],
  ['origin/main', /'origin\/'/],
  ['origin/HEAD', /'origin\/'/],
]

t.test('branchName: table', async (t) => {
  for (const name of GOOD_BRANCHES) {
    const r = validateBranchName(name)
    t.ok(r.ok, `accepts ${JSON.stringify(name.slice(0, 40))}`)
    if (r.ok) t.equal(r.value, name)
  }
  for (const [name, reason] of [...BAD_BRANCHES, ...STRICTER_THAN_GIT]) {
    const r = validateBranchName(name)
    t.notOk(r.ok, `rejects ${JSON.stringify(name.slice(0, 40))}`)
    if (!r.ok) {
      t.match(r.reason, reason)
      t.match(r.reason, /^branchName /, 'reason names the field')
    }
  }
  // Not expressible in argv, so not cross-checked with git: a lone surrogate has no UTF-8 form.
  const lone = validateBranchName('a\ud800')
  t.same(lone, { ok: false, reason: 'branchName must be valid Unicode' })
  t.equal(branchRef('feature/x'), 'refs/heads/feature/x')
})

// Exit status of `git check-ref-format --branch`, run outside any repository so that `@{-1}`
// and `@` are not expanded against a current branch.
async function gitAcceptsBranch (cwd: string, name: string): Promise<boolean> {
  try {
    await execFileAsync('git', ['check-ref-format', '--branch', name], {
      cwd,
      env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(cwd) },
    })
    return true
  } catch (err) {
    const code = (err as { code?: unknown }).code
    if (code === 128 || code === 1) return false
    throw err
  }
}

t.test('branchName: agrees with git check-ref-format --branch', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'refcheck-'))
  t.teardown(() => rm(cwd, { recursive: true, force: true }))
  // NUL cannot be passed in argv; every other name goes to the real git.
  const names = [...GOOD_BRANCHES, ...BAD_BRANCHES.map(([n]) => n)].filter((n) => !n.includes('\u0000'))
  const verdicts = await Promise.all(names.map((n) => gitAcceptsBranch(cwd, n)))
  names.forEach((name, i) => {
    t.equal(validateBranchName(name).ok, verdicts[i], `same verdict as git for ${JSON.stringify(name.slice(0, 40))}`)
  })
  for (const [name] of STRICTER_THAN_GIT) {
    t.ok(await gitAcceptsBranch(cwd, name), `git accepts ${JSON.stringify(name.slice(0, 20))}, refused here on purpose`)
  }
})

t.test('repoPath', async (t) => {
  const good = [
    'netops/automation',
    'group/subgroup/project',
    'project',
    'a.b_c-d/e',
    'repo.git',
    '...',
    'x'.repeat(MAX_REPO_PATH_LENGTH),
  ]
  for (const p of good) {
    const r = validateRepoPath(p)
    t.ok(r.ok, `accepts ${JSON.stringify(p.slice(0, 40))}`)
    if (r.ok) t.equal(r.value, p)
  }
  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['/netops/automation', /start or end/],
    ['netops/automation/', /start or end/],
    ['netops//automation', /'\/\/'/],
    ['..', /'\.\.'/],
    ['../secret', /'\.\.'/],
    ['netops/../x', /'\.\.'/],
    ['./x', /'\.'/],
    ['a b', /letters, digits/],
    ['a\\b', /letters, digits/],
    ['a%2e', /letters, digits/],
    ['a?b', /letters, digits/],
    ['a#b', /letters, digits/],
    ['a@b', /letters, digits/],
    ['a:b', /letters, digits/],
    ['ünï', /letters, digits/],
    ['a\u0000b', /letters, digits/],
    ['x'.repeat(MAX_REPO_PATH_LENGTH + 1), /at most 512/],
  ]
  for (const [p, reason] of bad) {
    const r = validateRepoPath(p)
    t.notOk(r.ok, `rejects ${JSON.stringify(p.slice(0, 40))}`)
    if (!r.ok) {
      t.match(r.reason, reason)
      t.match(r.reason, /^repoPath /, 'reason names the field')
    }
  }
})

t.test('repoRemoteUrl', async (t) => {
  t.equal(repoRemoteUrl('https://git.example.com', 'netops/automation'), 'https://git.example.com/netops/automation.git')
  t.equal(repoRemoteUrl('https://git.example.com/base//', 'a/b/c'), 'https://git.example.com/base/a/b/c.git')
  t.equal(repoRemoteUrl('http://127.0.0.1:1234', 'repo.git'), 'http://127.0.0.1:1234/repo.git.git')
})

t.test('cacheDirName: flat, distinct, never past a file name', async (t) => {
  t.equal(cacheDirName('netops/automation'), 'netops%2Fautomation.git')
  t.equal(cacheDirName('a.git/b'), 'a.git%2Fb.git', 'never nested inside the cache of a.git')
  t.notOk(validateRepoPath('a%2Fb').ok, "no valid repoPath holds '%': the mapping is one-to-one")
  const long = ['a'.repeat(200), 'b'.repeat(200), 'c'.repeat(100)].join('/')
  const other = ['a'.repeat(200), 'b'.repeat(200), 'd'.repeat(100)].join('/')
  t.ok(validateRepoPath(long).ok)
  t.ok(cacheDirName(long).length <= 255, 'within NAME_MAX')
  t.match(cacheDirName(long), /^a{160}~[0-9a-f]{32}\.git$/)
  t.not(cacheDirName(long), cacheDirName(other), 'the digest tells long paths apart')
  t.equal(cacheDirName('x'.repeat(200)), `${'x'.repeat(200)}.git`)
})

t.test('projectPath: special paths only where an operator allows them', async (t) => {
  const allowed = parseAllowedSpecialPaths(' .github/ , .gitmodules')
  t.ok(allowed.ok)
  if (!allowed.ok) return
  t.same([...allowed.value].sort(), ['.github', '.gitmodules'])
  t.same(validateProjectPath('.github/workflows/ci.yml', { allowedSpecialPaths: allowed.value }), { ok: true, value: '.github/workflows/ci.yml' })
  t.same(validateProjectPath('.gitmodules', { allowedSpecialPaths: allowed.value }), { ok: true, value: '.gitmodules' })
  t.notOk(validateProjectPath('.gitlab-ci.yml', { allowedSpecialPaths: allowed.value }).ok, 'one allowed name does not allow another')
  t.notOk(validateProjectPath('.git/config', { allowedSpecialPaths: allowed.value }).ok, '.git never')
  t.same(parseAllowedSpecialPaths(undefined), { ok: true, value: new Set() })
  const bad = parseAllowedSpecialPaths('.github,.git')
  t.notOk(bad.ok)
  if (!bad.ok) t.match(bad.reason, /GIT_ALLOWED_SPECIAL_PATHS may only name .* \(got "\.git"\)/)
})

// Pieces of the names that alias `.git` somewhere: case, NTFS short names and streams, trailing dots
// and spaces, HFS+-ignored and bidirectional characters, Windows device names and characters.
const RISKY_PIECES = ['.git', 'git', '.GIT', 'Git', '~1', '~9', '.', '..', ' ', ':', '::$INDEX_ALLOCATION', ':$DATA',
  '\u200c', '\u200d', '\u200e', '\ufeff', '\u202e', '\u206a', '\u2066', 'modules', '.gitmodules', 'gi7eba', 'CON', 'nul',
  'a', 'b.json', '\\', '<', '|', '*', 'hooks', '\u00e9', 'e\u0301']
const riskySegment = fc.array(fc.constantFrom(...RISKY_PIECES), { minLength: 1, maxLength: 4 }).map((p) => p.join(''))
export const riskyPath = fc.array(riskySegment, { minLength: 1, maxLength: 3 }).map((s) => s.join('/'))

t.test('projectPath: refuses every path git itself refuses (verify_path with protectNTFS and protectHFS)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'verify-path-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await execFileAsync('git', ['init', '-q', '--bare', dir])
  let index = 0
  const gitAcceptsPath = async (path: string): Promise<boolean> => {
    try {
      await execFileAsync('git', ['-c', 'core.protectNTFS=true', '-c', 'core.protectHFS=true', '--git-dir', dir,
        'update-index', '--add', '--cacheinfo', `100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,${path}`],
      { env: { ...process.env, GIT_INDEX_FILE: join(dir, `index-${index++}`) } })
      return true
    } catch {
      return false
    }
  }
  let refusedByGit = 0
  await fc.assert(fc.asyncProperty(riskyPath, async (path) => {
    if (path.includes('\u0000')) return true
    if (!(await gitAcceptsPath(path))) {
      refusedByGit++
      return !validateProjectPath(path).ok
    }
    return true
  }), {
    numRuns: propertyRuns(30),
    // Paths git refuses whatever the draw (a run of 30 can draw none): .git itself, its case, an
    // NTFS short name and trailing dot, an HFS-ignored character inside it.
    examples: [['.git/config'], ['a/.GIT/b'], ['GIT~1/x'], ['.git./hooks'], ['.g\u200cit/config']]
  })
  t.ok(refusedByGit >= 5, `git refused ${refusedByGit} of the generated paths, each refused here too`)
})

t.test('projectPath: every accepted path is one isomorphic-git reads back from a tree', async (t) => {
  const gitdir = await mkdtemp(join(tmpdir(), 'tree-read-'))
  t.teardown(() => rm(gitdir, { recursive: true, force: true }))
  await git.init({ fs, gitdir, bare: true })
  const blob = await git.writeBlob({ fs, gitdir, blob: new Uint8Array() })
  let accepted = 0
  await fc.assert(fc.asyncProperty(riskyPath, async (path) => {
    const r = validateProjectPath(path)
    if (!r.ok) return true
    accepted++
    for (const segment of r.value.split('/')) {
      const oid = await git.writeTree({ fs, gitdir, tree: [{ mode: '100644', path: segment, oid: blob, type: 'blob' }] })
      const { tree } = await git.readTree({ fs, gitdir, oid })
      if (tree[0]?.path !== segment) return false
    }
    return true
  }), { numRuns: propertyRuns(60) })
  t.ok(accepted > 0, `${accepted} generated paths were accepted and read back`)
})

t.test('branchName: invisible characters and refs/ refused wherever they are', async (t) => {
  const invisible = fc.constantFrom('\u200b', '\u200c', '\u200d', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069', '\ufeff', '\u061c')
  const plain = fc.stringMatching(/^[a-z0-9][a-z0-9/-]{0,10}[a-z0-9]$/).filter((s) => !s.includes('//'))
  fc.assert(fc.property(plain, invisible, plain, (a, c, b) => {
    const r = validateBranchName(`${a}${c}${b}`)
    return !r.ok && /invisible/.test(r.reason)
  }), { numRuns: propertyRuns(40) })
  fc.assert(fc.property(plain, (a) => !validateBranchName(`refs/${a}`).ok))
  t.pass('property held')
})

t.test('branchName: a HEAD segment, a pseudo-ref or the cache remote prefix refused wherever they are', async (t) => {
  const plain = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,10}$/)
  const reserved = fc.constantFrom('HEAD', 'head', 'Head', 'FETCH_HEAD', 'ORIG_HEAD', 'MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'BISECT_HEAD')
  const parts = fc.array(plain, { maxLength: 3 })
  fc.assert(fc.property(parts, reserved, parts, (before, segment, after) => {
    const r = validateBranchName([...before, segment, ...after].join('/'))
    return !r.ok && /reserves|must not be 'HEAD'/.test(r.reason)
  }), { numRuns: propertyRuns(60) })
  fc.assert(fc.property(fc.array(plain, { minLength: 1, maxLength: 3 }), (rest) => !validateBranchName(['origin', ...rest].join('/')).ok))
  t.pass('property held')
})
