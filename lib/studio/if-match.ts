// Optimistic concurrency on a document's integer `version`: the ETag is the version quoted
// ("3"), and a writer names the version it read in `If-Match` or in the body (`version`).

import type { CheckResult } from '../http/check-result.js'
import { parseIfMatch, quotedEtag } from '../http/if-match.js'

/** The versions a write may apply to; `undefined` means unconditional. */
export type ExpectedVersions = number[] | undefined

const MAX_VERSION = 2_147_483_647 // the column is a PostgreSQL integer

export function versionEtag (version: number): string {
  return quotedEtag(version)
}

const VERSION = /^[1-9]\d{0,9}$/

/** The versions an If-Match header names; `*` (or no header) is unconditional. */
export function parseVersionIfMatch (header: string | undefined): CheckResult<ExpectedVersions> {
  return parseIfMatch(header, (opaque) => VERSION.test(opaque) && Number(opaque) <= MAX_VERSION ? Number(opaque) : undefined, '"3"')
}

/**
 * Combines If-Match with the `version` a body may carry. Both name what the writer read, so
 * when both are given the body's version must be one of the header's.
 */
export function expectedVersions (ifMatch: ExpectedVersions, bodyVersion: number | undefined): CheckResult<ExpectedVersions> {
  if (bodyVersion === undefined) return { ok: true, value: ifMatch }
  if (ifMatch !== undefined && !ifMatch.includes(bodyVersion)) {
    return { ok: false, reason: `update.version (${bodyVersion}) contradicts If-Match` }
  }
  return { ok: true, value: [bodyVersion] }
}

export function matchesVersion (expected: ExpectedVersions, version: number): boolean {
  return expected === undefined || expected.includes(version)
}
