// Optimistic concurrency on a project file: its ETag is the Git blob id of its content, quoted
// ("3b18e5..."), and an update may name the one it read in If-Match.
import type { CheckResult } from '../http/check-result.js'
import { parseIfMatch, quotedEtag } from '../http/if-match.js'

export function blobEtag (blob: string): string {
  return quotedEtag(blob)
}

const BLOB_ID = /^[0-9a-f]{40}$/

/** The blob ids an If-Match header allows; undefined (no header, or `*`) is unconditional. */
export function parseBlobIfMatch (header: string | undefined): CheckResult<string[] | undefined> {
  return parseIfMatch(header, (opaque) => BLOB_ID.test(opaque) ? opaque : undefined, 'the "<blob id>" a read answered')
}
