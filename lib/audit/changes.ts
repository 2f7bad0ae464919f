// What an update changed, as audit details: the names of the fields sent, and the values of those
// that are no secret. A password is named, never copied.
import type { AuditDetails } from './events.js'

export function userChanges (update: { roles?: string[], groups?: string[], disabled?: boolean, email?: string | null, password?: string }): AuditDetails {
  return {
    fields: Object.keys(update).sort().join(','),
    ...(update.roles === undefined ? {} : { roles: update.roles.join(',') }),
    ...(update.groups === undefined ? {} : { groups: update.groups.join(',') }),
    ...(update.disabled === undefined ? {} : { disabled: update.disabled })
  }
}

export function adapterChanges (update: { baseUrl?: string, username?: string, password?: string }): AuditDetails {
  return {
    fields: Object.keys(update).sort().join(','),
    ...(update.baseUrl === undefined ? {} : { baseUrl: update.baseUrl })
  }
}
