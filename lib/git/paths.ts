// Validation of the repository, branch and file names that reach Git from request paths.
// Pure functions: every check happens before any clone, fetch or file write.
import { createHash } from 'node:crypto';

/** Outcome of a validation; `reason` is short enough to go straight into a 400 message. */
import type { CheckResult } from '../http/check-result.js';

/** Longest projectPath accepted (UTF-8 bytes): far beyond real use, bounded so paths stay cheap. */
export const MAX_PROJECT_PATH_BYTES = 1024;
/** Longest path segment (UTF-8 bytes): NAME_MAX of common filesystems, where the clone is written. */
export const MAX_SEGMENT_BYTES = 255;
/** Longest branch name (UTF-8 bytes): a loose ref is a file, so one filesystem name's worth. */
export const MAX_BRANCH_NAME_BYTES = 255;
/** Longest repoPath (bytes, ASCII only): generous for nested groups, bounded for the remote URL. */
export const MAX_REPO_PATH_LENGTH = 512;

const encoder = new TextEncoder();

// Why: limits apply to what reaches the filesystem and Git, which count bytes, not UTF-16 units.
function byteLength(s: string): number {
  return encoder.encode(s).length;
}

function fail<T>(reason: string): CheckResult<T> {
  return { ok: false, reason };
}

// C0 controls, DEL and C1 controls: never meaningful in a file name, and some end or split strings.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
// Lone UTF-16 surrogates cannot be encoded as UTF-8, so Git could not store the name.
const LONE_SURROGATE = /\p{Cs}/u;
// `C:`, `C:\` or `C:/`: a Windows drive prefix means an absolute path on that platform.
const DRIVE_PREFIX = /^[A-Za-z]:/;

// Why: Git treats `.git` case-insensitively in any path component, and NTFS ignores trailing dots
// and spaces, so `.GIT`, `.git.` and `.git ` all name the repository's own directory somewhere.
function isGitDirName(segment: string): boolean {
  return segment.replace(/[. ]+$/, '').toLowerCase() === '.git';
}

/**
 * Checks a project file path inside a repository and returns it as a normalised POSIX path.
 * Rejects anything that could leave the work tree, reach `.git`, or mean two different files.
 */
export function validateProjectPath(input: string): CheckResult<string> {
  if (input.length === 0) return fail('projectPath must not be empty');
  if (byteLength(input) > MAX_PROJECT_PATH_BYTES) {
    return fail(`projectPath must be at most ${MAX_PROJECT_PATH_BYTES} bytes`);
  }
  if (CONTROL_CHARS.test(input)) return fail('projectPath must not contain control characters');
  if (LONE_SURROGATE.test(input)) return fail('projectPath must be valid Unicode');
  if (input.includes('\\')) return fail("projectPath must not contain '\\'");
  if (input.startsWith('/') || DRIVE_PREFIX.test(input)) {
    return fail('projectPath must be relative to the repository root');
  }
  const segments = input.split('/');
  for (const segment of segments) {
    if (segment === '') return fail("projectPath must not contain empty segments ('//' or a trailing '/')");
    if (segment === '..') return fail("projectPath must not contain '..' segments");
    if (segment === '.') return fail("projectPath must not contain '.' segments");
    if (isGitDirName(segment)) return fail("projectPath must not point into '.git'");
    if (byteLength(segment) > MAX_SEGMENT_BYTES) {
      return fail(`projectPath segments must be at most ${MAX_SEGMENT_BYTES} bytes`);
    }
  }
  // NFC so that the same visible name typed on different systems is one file in the repository.
  return { ok: true, value: segments.join('/').normalize('NFC') };
}

// Characters `git check-ref-format` refuses anywhere in a ref name (besides controls and DEL).
const REF_FORBIDDEN = /[ ~^:?*[\\]/;

/**
 * Checks a branch name the way `git check-ref-format --branch` does (outside a repository),
 * with a length limit on top, so Git never gets a name it would refuse or misread.
 */
export function validateBranchName(input: string): CheckResult<string> {
  if (input.length === 0) return fail('branchName must not be empty');
  if (byteLength(input) > MAX_BRANCH_NAME_BYTES) {
    return fail(`branchName must be at most ${MAX_BRANCH_NAME_BYTES} bytes`);
  }
  if (/[\u0000-\u001f\u007f]/.test(input)) return fail('branchName must not contain control characters');
  if (LONE_SURROGATE.test(input)) return fail('branchName must be valid Unicode');
  const forbidden = REF_FORBIDDEN.exec(input);
  if (forbidden) {
    return fail(forbidden[0] === ' ' ? 'branchName must not contain spaces' : `branchName must not contain '${forbidden[0]}'`);
  }
  if (input.startsWith('-')) return fail("branchName must not start with '-'");
  if (input === '@') return fail("branchName must not be '@'");
  if (input === 'HEAD') return fail("branchName must not be 'HEAD'");
  if (input.includes('..')) return fail("branchName must not contain '..'");
  if (input.includes('@{')) return fail("branchName must not contain '@{'");
  if (input.endsWith('.')) return fail("branchName must not end with '.'");
  for (const segment of input.split('/')) {
    if (segment === '') return fail("branchName must not start or end with '/' or contain '//'");
    if (segment.startsWith('.')) return fail("branchName segments must not start with '.'");
    if (segment.endsWith('.lock')) return fail("branchName segments must not end with '.lock'");
  }
  return { ok: true, value: input };
}

/** The fully qualified ref for a branch: pushing to it can never resolve to a tag of the same name. */
export function branchRef(branchName: string): string {
  return `refs/heads/${branchName}`;
}

const REPO_SEGMENT = /^[A-Za-z0-9._-]+$/;

/**
 * Checks a repository path such as `group/subgroup/project`: plain URL-safe segments only,
 * so it can be appended to a provider URL without encoding or path tricks.
 */
export function validateRepoPath(input: string): CheckResult<string> {
  if (input.length === 0) return fail('repoPath must not be empty');
  if (input.length > MAX_REPO_PATH_LENGTH) {
    return fail(`repoPath must be at most ${MAX_REPO_PATH_LENGTH} characters`);
  }
  if (input.startsWith('/') || input.endsWith('/')) return fail("repoPath must not start or end with '/'");
  for (const segment of input.split('/')) {
    if (segment === '') return fail("repoPath must not contain '//'");
    if (segment === '.' || segment === '..') return fail("repoPath must not contain '.' or '..' segments");
    if (!REPO_SEGMENT.test(segment)) {
      return fail('repoPath segments may only contain letters, digits, and . _ -');
    }
  }
  return { ok: true, value: input };
}

/** Remote URL of a repository on a provider: `<base>/<repoPath>.git`, tolerant of a trailing '/'. */
export function repoRemoteUrl(providerUrl: string, repoPath: string): string {
  return `${providerUrl.replace(/\/+$/, '')}/${repoPath}.git`;
}

/** Longest cache directory name kept readable; longer ones end in a digest (NAME_MAX is 255 bytes). */
const MAX_CACHE_NAME = 200;

/**
 * Name of the directory caching a (validated) repository: flat, `/` written `%2F`, since a
 * segment may end in `.git` and nested names would put one cache inside another. `%` never
 * occurs in a valid repoPath, so distinct paths get distinct names.
 */
export function cacheDirName(repoPath: string): string {
  const flat = repoPath.replaceAll('/', '%2F');
  if (flat.length <= MAX_CACHE_NAME) return `${flat}.git`;
  const digest = createHash('sha256').update(repoPath).digest('hex').slice(0, 32);
  return `${flat.slice(0, MAX_CACHE_NAME - 40)}~${digest}.git`;
}
