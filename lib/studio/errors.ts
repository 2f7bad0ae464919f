// The studio's catalog: the refusals of the component group routes.
import { defineError, type CatalogError } from '../http/errors.js'

export const ComponentGroupNotFound = defineError<[id: string]>('COMPONENT_GROUP_NOT_FOUND', 'Component group "%s" not found', 404)
export const ComponentGroupVersionNotFound = defineError<[id: string, version: number]>('COMPONENT_GROUP_VERSION_NOT_FOUND',
  'Component group "%s" has no version %s in its history', 404)
export const ComponentGroupWriteForbidden = defineError<[id: string]>('COMPONENT_GROUP_WRITE_FORBIDDEN',
  'Component group "%s" may only be changed by its gbacWrite groups', 403)
/** An If-Match header, or an update.version, that is malformed or contradicts the other; the reason says which. */
export const InvalidVersionCondition = defineError<[reason: string]>('INVALID_VERSION_CONDITION', '%s', 400)
/** `why`: one of VERSION_CONFLICT_REASONS. */
export const VersionConflict = defineError<[id: string, why: string]>('VERSION_CONFLICT', 'Component group "%s" %s', 409)
export const VERSION_CONFLICT_REASONS = {
  /** The version the writer read is no longer the document's. */
  stale: 'has changed since the version given (If-Match or update.version): read it again, then retry',
  /** The document kept changing under the write (its access lists did). */
  changed: 'changed while it was being written: retry'
} as const
export const ImportTooLarge = defineError<[max: number, given: number]>('IMPORT_TOO_LARGE',
  'body/componentGroups must NOT have more than %s items (got %s): import them in parts', 400)
export const ImportTimeout = defineError<[timeoutMs: number]>('IMPORT_TIMEOUT',
  'The import did not finish within %s ms and stored nothing: import fewer groups at a time', 503)

// Two wordings, too different for one template: a create or replacement names the name it wanted;
// an import, whose names are chosen as it goes, has none to name.
const NameTakenError = defineError<[message: string]>('NAME_TAKEN', '%s', 409)

/** NAME_TAKEN: another group has `name` (or, for an import, one of the names it chose). */
export function nameTaken (name?: string): CatalogError {
  return new NameTakenError(name === undefined ? 'Another component group has this name' : `A component group named "${name}" already exists`)
}
