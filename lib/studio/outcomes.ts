// What the component groups repository answers to a write, and the error a refused one becomes.
import type { ComponentGroup } from '../../schemas/component-groups.js'
import type { CatalogError } from '../http/errors.js'
import { ComponentGroupNotFound, ComponentGroupWriteForbidden, nameTaken, VersionConflict, VERSION_CONFLICT_REASONS } from './errors.js'
import type { Refusal } from './gbac.js'

/**
 * Why a write did not happen: a GBAC refusal (gbac.ts); 'changed': the document kept changing
 * under the write (its access lists did); 'name-taken': another group has the name.
 */
export type WriteRefusal = Refusal | 'changed' | 'name-taken'

/** A write's result: the document, or why not. */
export type Outcome = { doc: ComponentGroup } | { refusal: WriteRefusal }

/** A restore's result: a write's, or the version to restore is not in the history. */
export type RestoreOutcome = Outcome | { refusal: 'version-not-found' }

/** Why an import stored nothing: a name taken by concurrent writes every time, or its time ran out. */
export type ImportOutcome = { created: ComponentGroup[] } | { refusal: 'name-taken' | 'timeout' }

/** The answer to a write of group `id` that did not happen; `name`: the name it would have had. */
export function refusalError (refusal: WriteRefusal, id: string, name?: string): CatalogError {
  switch (refusal) {
    case 'not-found': return new ComponentGroupNotFound(id)
    case 'forbidden': return new ComponentGroupWriteForbidden(id)
    case 'name-taken': return nameTaken(name)
    case 'stale': return new VersionConflict(id, VERSION_CONFLICT_REASONS.stale)
    case 'changed': return new VersionConflict(id, VERSION_CONFLICT_REASONS.changed)
  }
}
