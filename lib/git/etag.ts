// Optimistic concurrency on a project file: its ETag is the Git blob id of its content, quoted
// ("3b18e5..."), and an update may name the one it read in If-Match (RFC 9110 13.1.1).
import type { CheckResult } from '../http/check-result.js'

export function blobEtag (blob: string): string {
  return `"${blob}"`
}

const BLOB_ID = /^[0-9a-f]{40}$/
const MALFORMED = 'If-Match must be "*" or a comma-separated list of quoted ETags, such as the "<blob id>" a read answered (with the quotes)'

/**
 * The blob ids an If-Match header allows; undefined (no header, or `*`) is unconditional. Weak
 * tags and tags that are no blob id never match (strong comparison), so they are left out.
 */
export function parseBlobIfMatch (header: string | undefined): CheckResult<string[] | undefined> {
  if (header === undefined || header.trim() === '*') return { ok: true, value: undefined }
  const blobs: string[] = []
  const items = header.split(',').map((item) => item.trim()).filter((item) => item !== '')
  if (items.length === 0) return { ok: false, reason: MALFORMED }
  for (const item of items) {
    const match = /^(W\/)?"([\x21\x23-\x7e]*)"$/.exec(item)
    if (match === null) return { ok: false, reason: MALFORMED }
    const [, weak, opaque = ''] = match
    if (weak === undefined && BLOB_ID.test(opaque)) blobs.push(opaque)
  }
  return { ok: true, value: blobs }
}
