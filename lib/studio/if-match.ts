// Optimistic concurrency on a document's integer `version`: the ETag is the version quoted
// ("3"), and a writer names the version it read in `If-Match` or in the body (`version`).

import type { CheckResult } from '../http/check-result.js'

/** The versions a write may apply to; `undefined` means unconditional. */
export type ExpectedVersions = number[] | undefined

const MAX_VERSION = 2_147_483_647 // the column is a PostgreSQL integer

export function versionEtag (version: number): string {
  return `"${version}"`
}

// One entity-tag (RFC 9110 8.8.3): an optional W/ prefix, then a quoted string of etagc
// (%x21 / %x23-7E / obs-text).
const ENTITY_TAG = /(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"/y
const VERSION = /^[1-9]\d{0,9}$/
const MALFORMED = 'If-Match must be "*" or a comma-separated list of quoted ETags, such as "3" (with the quotes)'

/**
 * Parses an If-Match header into the versions it names. `*` (or no header) is unconditional.
 * Tags that cannot be one of our versions (weak tags, which never match under the strong
 * comparison If-Match uses, or tags that are not a version number) are left out of the list, so
 * a header naming only such tags matches nothing and the write is refused as stale. A header that
 * is not a list of quoted tags is malformed.
 */
export function parseIfMatch (header: string | undefined): CheckResult<ExpectedVersions> {
  if (header === undefined || header.trim() === '*') return { ok: true, value: undefined }
  const versions: number[] = []
  let tags = 0
  let at = 0
  const skip = (chars: string): void => { while (at < header.length && chars.includes(header.charAt(at))) at++ }
  for (;;) {
    // Empty list elements (", ,") are allowed by the list syntax (RFC 9110 5.6.1).
    skip(', \t')
    if (at >= header.length) break
    ENTITY_TAG.lastIndex = at
    const match = ENTITY_TAG.exec(header)
    if (match === null) return { ok: false, reason: MALFORMED }
    tags++
    const [, weak, opaque = ''] = match
    if (weak === undefined && VERSION.test(opaque) && Number(opaque) <= MAX_VERSION) versions.push(Number(opaque))
    at = ENTITY_TAG.lastIndex
    skip(' \t')
    if (at < header.length && header.charAt(at) !== ',') return { ok: false, reason: MALFORMED }
  }
  return tags === 0 ? { ok: false, reason: MALFORMED } : { ok: true, value: versions }
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
