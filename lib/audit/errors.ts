// The audit trail's catalog: the 400 of GET /audit's time range (the list language's own
// parameters answer INVALID_LIST_PARAMETER), and the 503 of a write refused while the trail's
// queue is full (the reply also carries `retryAfter`, and a Retry-After header).
import { defineError } from '../http/errors.js'

export const InvalidAuditTimeRange = defineError<[reason: string]>('INVALID_AUDIT_TIME_RANGE', '%s', 400)
export const AuditTrailFull = defineError<[queued: number]>('AUDIT_TRAIL_FULL',
  'The audit trail cannot record more now (%s events wait for the database): nothing was done; retry after the time in Retry-After', 503)
