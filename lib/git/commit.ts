// What goes into a project commit: the file's bytes, the message and the author. Pure.
import type { CheckResult } from '../http/check-result.js'

/** A project document as written to Git: JSON with a 2-space indent and a trailing newline, keys in the order given. */
export function canonicalJson (project: unknown): string {
  return `${JSON.stringify(project, null, 2)}\n`
}

/** Longest commit message accepted (characters): far beyond a useful message, bounded all the same. */
export const MAX_COMMIT_MESSAGE_LENGTH = 10_000

export function defaultCommitMessage (projectPath: string, verb: 'Initialize' | 'Update' = 'Initialize'): string {
  return `${verb} project ${projectPath}`
}

/**
 * The commit message to write: the one given (line endings made LF, trailing blanks dropped, one
 * final newline, as git's own clean-up does), or the default naming the project.
 */
export function commitMessage (input: string | undefined, projectPath: string, verb: 'Initialize' | 'Update' = 'Initialize'): CheckResult<string> {
  if (input === undefined) return { ok: true, value: `${defaultCommitMessage(projectPath, verb)}\n` }
  // Git ends a commit object's text at NUL in most tools, so the message would be cut short.
  if (input.includes('\u0000')) return { ok: false, reason: 'commitMessage must not contain NUL characters' }
  if (input.length > MAX_COMMIT_MESSAGE_LENGTH) {
    return { ok: false, reason: `commitMessage must be at most ${MAX_COMMIT_MESSAGE_LENGTH} characters` }
  }
  const text = input.replace(/\r\n?/g, '\n').replace(/^\s*\n/, '').trimEnd()
  if (text.trim() === '') return { ok: false, reason: 'commitMessage must not be blank' }
  return { ok: true, value: `${text}\n` }
}

export interface GitIdentity {
  name: string
  email: string
  /** Seconds since the epoch. */
  timestamp: number
  /** Minutes from UTC, as isomorphic-git counts them; 0: commits are written in UTC. */
  timezoneOffset: number
}

/** Domain of the address used when a user has no usable email (reserved: it never delivers). */
export const FALLBACK_EMAIL_DOMAIN = 'users.noreply.invalid'

// Git's ident line is `Name <email> time zone`: '<', '>' and line breaks would corrupt it.
const IDENT_BREAKING = /[<>\u0000-\u001f\u007f]/
const IDENT_BREAKING_ALL = new RegExp(IDENT_BREAKING.source, 'g')

/**
 * The author (and committer) of a commit made for `user`: the username as the name, the user's
 * email, or `<username>@users.noreply.invalid` when the user has none that Git can carry.
 */
export function commitAuthor (user: { username: string, email: string | null }, now: Date): GitIdentity {
  const name = user.username.replace(IDENT_BREAKING_ALL, '')
  const email = user.email !== null && user.email !== '' && !IDENT_BREAKING.test(user.email)
    ? user.email
    : `${name.replace(/@/g, '.')}@${FALLBACK_EMAIL_DOMAIN}`
  return { name, email, timestamp: Math.floor(now.getTime() / 1000), timezoneOffset: 0 }
}
