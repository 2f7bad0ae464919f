// What one audit event holds, how it is made safe to store, and the time range of GET /audit.
import type { CheckResult } from '../http/check-result.js'

/** Free-form facts of an event: flat, small values (never a body, password, token or secret). */
export type AuditDetails = Record<string, string | number | boolean | null>

/** Who made the request: a user, or a service account acting as its user. */
export interface AuditActor {
  user: string | null
  serviceAccount: string | null
}

export type AuditOutcome = 'success' | 'failure' | 'denied'

export interface AuditEvent {
  /** When the request was received, in epoch milliseconds (a Date would cost its toISOString in the batch's JSON). */
  at: number
  actor: string | null
  serviceAccount: string | null
  address: string
  requestId: string
  action: string
  target: string
  outcome: AuditOutcome
  status: number
  durationMs: number
  details: AuditDetails | null
}

/** The longest text kept of any field or detail value: an event stays small whatever the request held. */
export const AUDIT_MAX_TEXT = 1024
/** The most details an event keeps. */
export const AUDIT_MAX_DETAILS = 16

// NUL, and a surrogate without its pair (a truncation may leave one): neither text nor jsonb takes them.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** `text` as PostgreSQL's text and jsonb take it (no NUL, no lone surrogate), at most AUDIT_MAX_TEXT characters. */
export function storableText (text: string): string {
  const bounded = text.length > AUDIT_MAX_TEXT ? text.slice(0, AUDIT_MAX_TEXT) : text
  // Nearly every text is storable as it is: two native checks answer that for a third of the
  // regular expression's time (an event's seven texts, 0.12 against 0.35 us).
  if (bounded.isWellFormed() && !bounded.includes('\u0000')) return bounded
  return bounded.replace(UNSTORABLE, '\uFFFD')
}

export function storableDetails (details: AuditDetails | null): AuditDetails | null {
  if (details === null) return null
  const out: AuditDetails = {}
  for (const [key, value] of Object.entries(details).slice(0, AUDIT_MAX_DETAILS)) {
    out[storableText(key)] = typeof value === 'string' ? storableText(value) : typeof value === 'number' && !Number.isFinite(value) ? null : value
  }
  return out
}

/** The most query parameter names a relayed path's event keeps. */
export const RELAYED_QUERY_MAX_NAMES = 16

/**
 * A relayed path as the audit trail keeps it: the path without its query string (whose values
 * may be credentials, `?token=...`), and the names of its parameters, comma-separated, in order,
 * each once (at most RELAYED_QUERY_MAX_NAMES); `query` is absent when there was no query.
 */
export function relayedPath (path: string): { path: string, query?: string } {
  const at = path.indexOf('?')
  if (at < 0) return { path }
  const names = new Set<string>()
  for (const part of path.slice(at + 1).split('&')) {
    if (names.size >= RELAYED_QUERY_MAX_NAMES) break
    const name = part.split('=', 1)[0] ?? ''
    if (name !== '') names.add(name)
  }
  return { path: path.slice(0, at), query: [...names].join(',') }
}

/** What a response's status says of the request an event records. */
export function outcomeOf (status: number): AuditOutcome {
  return status < 400 ? 'success' : 'failure'
}

/** The statuses recorded as denied requests when the route recorded nothing itself. */
export const isDenied = (status: number): boolean => status === 401 || status === 403

/** Dates as GET /audit takes them: ISO 8601, a day or a time with its offset. */
export const ISO_DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$'
const ISO_DATE = new RegExp(ISO_DATE_PATTERN)

const EARLIEST_TEXT = '0001-01-01T00:00:00Z'
const LATEST_TEXT = '9999-12-31T23:59:59.999Z'
/** The instants GET /audit takes as `from` and `to`, both included. */
export const EARLIEST_DATE = new Date(EARLIEST_TEXT)
export const LATEST_DATE = new Date(LATEST_TEXT)

export interface TimeRange {
  from?: Date
  to?: Date
}

function parseDate (name: string, text: string | undefined): CheckResult<Date | undefined> {
  if (text === undefined) return { ok: true, value: undefined }
  const date = new Date(text)
  // Date accepts 2026-02-31 as March 3rd: the day must survive the round trip.
  const day = text.slice(0, 10)
  if (!ISO_DATE.test(text) || Number.isNaN(date.getTime()) || !sameCalendarDay(day)) {
    return { ok: false, reason: `querystring/${name} must be an ISO 8601 date or date-time with an offset (2026-01-31 or 2026-01-31T12:00:00Z)` }
  }
  // Year 0000 (and an offset that carries a date past either edge) is a date JavaScript has and
  // PostgreSQL (or its driver) does not: the instant must be in years 0001 to 9999, in UTC.
  if (date.getTime() < EARLIEST_DATE.getTime() || date.getTime() > LATEST_DATE.getTime()) {
    return { ok: false, reason: `querystring/${name} must be from ${EARLIEST_TEXT} to ${LATEST_TEXT}` }
  }
  return { ok: true, value: date }
}

function sameCalendarDay (day: string): boolean {
  const parsed = new Date(`${day}T00:00:00Z`)
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === day
}

/** `from` (inclusive) and `to` (exclusive) of a GET /audit query, or a 400's reason naming the parameter. */
export function parseTimeRange (query: { from?: string, to?: string }): CheckResult<TimeRange> {
  const from = parseDate('from', query.from)
  if (!from.ok) return from
  const to = parseDate('to', query.to)
  if (!to.ok) return to
  if (from.value !== undefined && to.value !== undefined && from.value.getTime() > to.value.getTime()) {
    return { ok: false, reason: 'querystring/from must not be later than querystring/to' }
  }
  return { ok: true, value: { ...(from.value === undefined ? {} : { from: from.value }), ...(to.value === undefined ? {} : { to: to.value }) } }
}
