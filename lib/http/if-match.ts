// Optimistic concurrency for every resource that has one (component group versions, Git project
// blobs): an ETag is a value quoted ("3", "<blob id>"), and a writer names the ETags it read in
// If-Match (RFC 9110 13.1.1). One parser, so both resources accept and refuse the same headers.

import type { CheckResult } from './check-result.js'

/** The ETag of a value: the value quoted. */
export function quotedEtag (value: string | number): string {
  return `"${value}"`
}

// One entity-tag (RFC 9110 8.8.3): an optional W/ prefix, then a quoted string of etagc
// (%x21 / %x23-7E / obs-text).
const ENTITY_TAG = /(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"/y

/**
 * The values an If-Match header names; `undefined` (no header, or `*`) is unconditional.
 * `value` reads a strong tag's opaque part, or answers undefined for a tag that cannot be one of
 * the resource's ETags. Such tags, and weak tags (which never match under the strong comparison
 * If-Match uses), are left out of the list, so a header naming only them matches nothing and the
 * write is refused as stale. A header that is not a list of quoted tags is malformed; the reason
 * shows `example`, an ETag of the resource.
 */
export function parseIfMatch<T> (header: string | undefined, value: (opaque: string) => T | undefined, example: string): CheckResult<T[] | undefined> {
  if (header === undefined || header.trim() === '*') return { ok: true, value: undefined }
  const malformed = { ok: false as const, reason: `If-Match must be "*" or a comma-separated list of quoted ETags, such as ${example} (with the quotes)` }
  const values: T[] = []
  let tags = 0
  let at = 0
  const skip = (chars: string): void => { while (at < header.length && chars.includes(header.charAt(at))) at++ }
  for (;;) {
    // Empty list elements (", ,") are allowed by the list syntax (RFC 9110 5.6.1).
    skip(', \t')
    if (at >= header.length) break
    ENTITY_TAG.lastIndex = at
    const match = ENTITY_TAG.exec(header)
    if (match === null) return malformed
    tags++
    const [, weak, opaque = ''] = match
    const read = weak === undefined ? value(opaque) : undefined
    if (read !== undefined) values.push(read)
    at = ENTITY_TAG.lastIndex
    skip(' \t')
    if (at < header.length && header.charAt(at) !== ',') return malformed
  }
  return tags === 0 ? malformed : { ok: true, value: values }
}
