// Validation of the repository, branch and file names that reach Git from request paths.
// Pure functions: every check happens before any clone, fetch or file write.
import { createHash } from 'node:crypto'

/** Outcome of a validation; `reason` is short enough to go straight into a 400 message. */
import type { CheckResult } from '../http/check-result.js'

/** Longest projectPath accepted (UTF-8 bytes): far beyond real use, bounded so paths stay cheap. */
export const MAX_PROJECT_PATH_BYTES = 1024
/** Longest path segment (UTF-8 bytes): NAME_MAX of common filesystems, where the clone is written. */
export const MAX_SEGMENT_BYTES = 255
/** Longest branch name (UTF-8 bytes): a loose ref is a file, so one filesystem name's worth. */
export const MAX_BRANCH_NAME_BYTES = 255
/** Longest repoPath (bytes, ASCII only): generous for nested groups, bounded for the remote URL. */
export const MAX_REPO_PATH_LENGTH = 512

const encoder = new TextEncoder()

// Why: limits apply to what reaches the filesystem and Git, which count bytes, not UTF-16 units.
function byteLength (s: string): number {
  return encoder.encode(s).length
}

function fail<T> (reason: string): CheckResult<T> {
  return { ok: false, reason }
}

// C0 controls, DEL and C1 controls: never meaningful in a file name, and some end or split strings.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/
// Lone UTF-16 surrogates cannot be encoded as UTF-8, so Git could not store the name.
const LONE_SURROGATE = /\p{Cs}/u
// `C:`, `C:\` or `C:/`: a Windows drive prefix means an absolute path on that platform.
const DRIVE_PREFIX = /^[A-Za-z]:/

// Invisible format characters (Unicode category Cf): zero-width joiners and spaces, the byte-order
// mark, bidirectional controls. HFS+ ignores some of them in names (git's is_hfs_dotgit), so
// `.g\u200cit` is `.git` there; the bidirectional ones make a name read differently from what it is.
const FORMAT_CHARS = /\p{Cf}/u
// Characters Windows refuses in file names (git's is_valid_win32_path); ':' also names an NTFS
// stream, so `.git::$INDEX_ALLOCATION` is the `.git` directory there.
const WINDOWS_FORBIDDEN = /[<>:"|?*]/
// Device names Windows reserves in every directory, with or without an extension.
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$)(\..*)?$/i
// An NTFS 8.3 short name (`GIT~1`, `GI7EBA~1` for .gitmodules): another name of some other entry,
// which git cannot tell from here, so every such name is refused.
const NTFS_SHORT_NAME = /~[0-9]+(\.[^.]*)?$/

// Why: Git treats `.git` case-insensitively in any path component, and NTFS ignores trailing dots
// and spaces, so `.GIT`, `.git.` and `.git ` all name the repository's own directory somewhere.
function isGitDirName (segment: string): boolean {
  return segment.replace(/[. ]+$/, '').toLowerCase() === '.git'
}

/**
 * Paths a project may only be written to when an operator allows them (GIT_ALLOWED_SPECIAL_PATHS):
 * they configure submodules or CI of the repository, not a project.
 */
export const SPECIAL_PATHS = ['.gitmodules', '.github', '.gitlab-ci.yml'] as const
export type SpecialPath = typeof SPECIAL_PATHS[number]

/** Parses GIT_ALLOWED_SPECIAL_PATHS (comma-separated names of SPECIAL_PATHS). */
export function parseAllowedSpecialPaths (input: string | undefined): CheckResult<ReadonlySet<SpecialPath>> {
  const allowed = new Set<SpecialPath>()
  for (const raw of (input ?? '').split(',')) {
    const name = raw.trim()
    if (name === '') continue
    const known = SPECIAL_PATHS.find((p) => p === name.replace(/\/$/, ''))
    if (known === undefined) {
      return fail(`GIT_ALLOWED_SPECIAL_PATHS may only name ${SPECIAL_PATHS.join(', ')} (got "${name.slice(0, 40)}")`)
    }
    allowed.add(known)
  }
  return { ok: true, value: allowed }
}

/** The reason a path segment is refused on some platform Git runs on, or undefined. */
function segmentProblem (segment: string): string | undefined {
  if (segment === '') return "must not contain empty segments ('//' or a trailing '/')"
  if (segment === '..') return "must not contain '..' segments"
  if (segment === '.') return "must not contain '.' segments"
  if (isGitDirName(segment)) return "must not point into '.git'"
  if (byteLength(segment) > MAX_SEGMENT_BYTES) return `segments must be at most ${MAX_SEGMENT_BYTES} bytes`
  const forbidden = WINDOWS_FORBIDDEN.exec(segment)
  if (forbidden) return `must not contain '${forbidden[0]}' (refused on Windows)`
  if (/[. ]$/.test(segment)) return "segments must not end with '.' or a space (refused on Windows)"
  if (WINDOWS_DEVICE.test(segment)) return `must not use the Windows device name '${segment.split('.')[0] ?? ''}'`
  if (NTFS_SHORT_NAME.test(segment)) return "segments must not look like an NTFS short name ('NAME~1')"
  return undefined
}

/**
 * Checks a project file path inside a repository and returns it as a normalised POSIX path.
 * Refuses anything that could leave the work tree, reach `.git` under another name on some
 * filesystem (git's verify_path with core.protectNTFS and core.protectHFS, and Windows' own
 * rules), or mean two different files; and the special paths of SPECIAL_PATHS unless allowed.
 */
export function validateProjectPath (
  input: string,
  options: { allowedSpecialPaths?: ReadonlySet<SpecialPath> } = {}
): CheckResult<string> {
  if (input.length === 0) return fail('projectPath must not be empty')
  if (byteLength(input) > MAX_PROJECT_PATH_BYTES) {
    return fail(`projectPath must be at most ${MAX_PROJECT_PATH_BYTES} bytes`)
  }
  if (CONTROL_CHARS.test(input)) return fail('projectPath must not contain control characters')
  if (LONE_SURROGATE.test(input)) return fail('projectPath must be valid Unicode')
  if (FORMAT_CHARS.test(input)) {
    return fail('projectPath must not contain invisible format characters (zero-width, byte-order mark, bidirectional controls)')
  }
  if (input.includes('\\')) return fail("projectPath must not contain '\\'")
  if (input.startsWith('/') || DRIVE_PREFIX.test(input)) {
    return fail('projectPath must be relative to the repository root')
  }
  // NFC so that the same visible name typed on different systems is one file in the repository.
  const segments = input.normalize('NFC').split('/')
  for (const segment of segments) {
    const problem = segmentProblem(segment)
    if (problem !== undefined) return fail(`projectPath ${problem}`)
  }
  const first = (segments[0] ?? '').toLowerCase()
  const special = SPECIAL_PATHS.find((p) => p === first)
  if (special !== undefined && options.allowedSpecialPaths?.has(special) !== true) {
    return fail(`projectPath must not be '${special}' or inside it (it configures the repository; see GIT_ALLOWED_SPECIAL_PATHS)`)
  }
  return { ok: true, value: segments.join('/') }
}

// Characters `git check-ref-format` refuses anywhere in a ref name (besides controls and DEL).
const REF_FORBIDDEN = /[ ~^:?*[\\]/
// Git's pseudo-refs (`HEAD`, `FETCH_HEAD`, `ORIG_HEAD`, `MERGE_HEAD`, `CHERRY_PICK_HEAD`, ...) as a
// component: the cache tracks branch `b` as `refs/remotes/origin/b` beside its own
// `refs/remotes/origin/HEAD`, so `HEAD/x` would be a file and a directory at once. `HEAD` in any
// case: a cache on a case-insensitive filesystem would collide the same way.
const isPseudoRef = (segment: string): boolean => segment.toLowerCase() === 'head' || /^[A-Z]+(_[A-Z]+)*_HEAD$/.test(segment)
// Other names Git keeps for itself at the top of a repository (git's is_pseudoref_syntax).
const RESERVED_NAMES = new Set(['AUTO_MERGE', 'MERGE_AUTOSTASH', 'BISECT_EXPECTED_REV', 'NOTES_MERGE_PARTIAL', 'NOTES_MERGE_REF', 'MERGE_MSG'])
/** The remote the cache tracks the provider's branches under (`refs/remotes/origin/<branch>`). */
export const CACHE_REMOTE = 'origin'

/**
 * Checks a branch name the way `git check-ref-format --branch` does (outside a repository),
 * with a length limit on top, so Git never gets a name it would refuse or misread.
 */
export function validateBranchName (input: string): CheckResult<string> {
  if (input.length === 0) return fail('branchName must not be empty')
  if (byteLength(input) > MAX_BRANCH_NAME_BYTES) {
    return fail(`branchName must be at most ${MAX_BRANCH_NAME_BYTES} bytes`)
  }
  if (/[\u0000-\u001f\u007f]/.test(input)) return fail('branchName must not contain control characters')
  if (LONE_SURROGATE.test(input)) return fail('branchName must be valid Unicode')
  if (FORMAT_CHARS.test(input)) {
    return fail('branchName must not contain invisible format characters (zero-width, byte-order mark, bidirectional controls)')
  }
  // `refs/...` would make the full name `refs/heads/refs/...`, which reads as another ref.
  if (input.startsWith('refs/')) return fail("branchName must not start with 'refs/'")
  const forbidden = REF_FORBIDDEN.exec(input)
  if (forbidden) {
    return fail(forbidden[0] === ' ' ? 'branchName must not contain spaces' : `branchName must not contain '${forbidden[0]}'`)
  }
  if (input.startsWith('-')) return fail("branchName must not start with '-'")
  if (input === '@') return fail("branchName must not be '@'")
  if (input === 'HEAD') return fail("branchName must not be 'HEAD'")
  // `origin/main` reads as the cache's tracking ref of `main` wherever a short name is resolved.
  if (input.startsWith(`${CACHE_REMOTE}/`)) return fail(`branchName must not start with '${CACHE_REMOTE}/' (the cache's remote)`)
  if (RESERVED_NAMES.has(input.toUpperCase())) return fail(`branchName must not be '${input}' (a name Git reserves)`)
  if (input.includes('..')) return fail("branchName must not contain '..'")
  if (input.includes('@{')) return fail("branchName must not contain '@{'")
  if (input.endsWith('.')) return fail("branchName must not end with '.'")
  for (const segment of input.split('/')) {
    if (segment === '') return fail("branchName must not start or end with '/' or contain '//'")
    if (segment.startsWith('.')) return fail("branchName segments must not start with '.'")
    if (segment.endsWith('.lock')) return fail("branchName segments must not end with '.lock'")
    if (isPseudoRef(segment)) return fail(`branchName must not have '${segment}' as a segment (a name Git or the cache reserves)`)
  }
  return { ok: true, value: input }
}

/** The fully qualified ref for a branch: pushing to it can never resolve to a tag of the same name. */
export function branchRef (branchName: string): string {
  return `refs/heads/${branchName}`
}

const REPO_SEGMENT = /^[A-Za-z0-9._-]+$/

/**
 * Checks a repository path such as `group/subgroup/project`: plain URL-safe segments only,
 * so it can be appended to a provider URL without encoding or path tricks.
 */
export function validateRepoPath (input: string): CheckResult<string> {
  if (input.length === 0) return fail('repoPath must not be empty')
  if (input.length > MAX_REPO_PATH_LENGTH) {
    return fail(`repoPath must be at most ${MAX_REPO_PATH_LENGTH} characters`)
  }
  if (input.startsWith('/') || input.endsWith('/')) return fail("repoPath must not start or end with '/'")
  for (const segment of input.split('/')) {
    if (segment === '') return fail("repoPath must not contain '//'")
    if (segment === '.' || segment === '..') return fail("repoPath must not contain '.' or '..' segments")
    if (!REPO_SEGMENT.test(segment)) {
      return fail('repoPath segments may only contain letters, digits, and . _ -')
    }
  }
  return { ok: true, value: input }
}

/** Remote URL of a repository on a provider: `<base>/<repoPath>.git`, tolerant of a trailing '/'. */
export function repoRemoteUrl (providerUrl: string, repoPath: string): string {
  return `${providerUrl.replace(/\/+$/, '')}/${repoPath}.git`
}

/** Longest cache directory name kept readable; longer ones end in a digest (NAME_MAX is 255 bytes). */
const MAX_CACHE_NAME = 200

/**
 * Name of the directory caching a (validated) repository: flat, `/` written `%2F`, since a
 * segment may end in `.git` and nested names would put one cache inside another. `%` never
 * occurs in a valid repoPath, so distinct paths get distinct names.
 */
export function cacheDirName (repoPath: string): string {
  const flat = repoPath.replaceAll('/', '%2F')
  if (flat.length <= MAX_CACHE_NAME) return `${flat}.git`
  const digest = createHash('sha256').update(repoPath).digest('hex').slice(0, 32)
  return `${flat.slice(0, MAX_CACHE_NAME - 40)}~${digest}.git`
}
