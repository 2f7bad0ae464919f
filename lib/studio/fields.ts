// What a component group stores of the input of a create, an import or a replacement.
import type { ComponentGroupCreate, ComponentGroupFields, ComponentGroupUpdate } from '../../schemas/component-groups.js'

/**
 * The stored fields of a create, import or replacement: defaults applied, `_id` and `version`
 * left out, one member given alone made a list of one.
 */
export function toFields (input: ComponentGroupCreate | ComponentGroupUpdate): ComponentGroupFields {
  return {
    name: input.name,
    description: input.description ?? '',
    members: Array.isArray(input.members) ? input.members : [input.members],
    gbacRead: input.gbacRead,
    gbacWrite: input.gbacWrite ?? [],
    meta: input.meta ?? {}
  }
}
