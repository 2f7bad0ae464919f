// The audit trail's catalog: the 400 of GET /audit's time range (the list language's own
// parameters answer INVALID_LIST_PARAMETER).
import { defineError } from '../http/errors.js'

export const InvalidAuditTimeRange = defineError<[reason: string]>('INVALID_AUDIT_TIME_RANGE', '%s', 400)
