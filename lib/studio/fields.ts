// What a component group stores of the input of a create, an import or a replacement.
import type { ComponentGroupCreate, ComponentGroupFields, ComponentGroupUpdate } from '../../schemas/component-groups.js'

/** The stored fields of a create, import or replacement: defaults applied, `_id` and `version` left out. */
export function toFields (input: ComponentGroupCreate | ComponentGroupUpdate): ComponentGroupFields {
  return {
    name: input.name,
    description: input.description ?? '',
    members: input.members,
    gbacRead: input.gbacRead,
    gbacWrite: input.gbacWrite ?? [],
    meta: input.meta ?? {}
  }
}
