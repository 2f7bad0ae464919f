import { Type, type Static } from '@sinclair/typebox'
import { OBJECT_ID_PATTERN } from '../lib/http/ids.js'
import type { ListSpec } from '../lib/lists/grammar.js'
import { listQuerySchema, pageSchema, ProjectionQuery } from './lists.js'
import { component, FreeFormObject } from './common.js'

// Limits: generous for real groups, small enough that one request cannot make the service or the
// database do unbounded work. docs/limits.md lists them.
export const LIMITS = {
  name: 255,
  description: 10_000,
  members: 2_000,
  folderDepth: 32,
  segment: 255,
  componentPath: 1_024,
  sourceCollection: 128,
  ref: 256,
  group: 128,
  groups: 256,
  /** The most groups one import may hold (STUDIO_IMPORT_MAX_GROUPS may lower it, default 500). */
  importCount: 10_000,
  /** `meta`, as JSON text (UTF-8), and how deep it may nest (the object itself being 1). */
  metaBytes: 65_536,
  metaDepth: 64
} as const

const Id = Type.String({ pattern: OBJECT_ID_PATTERN, description: 'Made by the service: 24 hexadecimal digits.' })
const Name = Type.String({ minLength: 1, maxLength: LIMITS.name, pattern: '\\S', description: 'Unique among component groups.' })
const Description = Type.String({ maxLength: LIMITS.description })
const Group = Type.String({ minLength: 1, maxLength: LIMITS.group })
const Groups = (description: string) => Type.Array(Group, { uniqueItems: true, maxItems: LIMITS.groups, description })
const GbacRead = Groups('Groups allowed to read; empty: every user.')
const GbacWrite = Groups('Groups allowed to write (besides reading); empty: every user with a writer role.')
const Meta = Type.Object({}, { additionalProperties: true, description: 'Free-form metadata.' })
const Version = Type.Integer({ minimum: 1, maximum: 2_147_483_647 })

export const FolderMember = Type.Object({
  path: Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.segment }), { minItems: 1, maxItems: LIMITS.folderDepth }),
  type: Type.Optional(Type.Literal('folder'))
}, { additionalProperties: false, description: 'A folder: its path as segments. Without `type`, a member whose path is a list of segments is a folder; it is kept without one.' })

export const ComponentMember = Type.Object({
  path: Type.String({ minLength: 1, maxLength: LIMITS.componentPath }),
  type: Type.Optional(Type.Literal('component')),
  sourceCollection: Type.String({ minLength: 1, maxLength: LIMITS.sourceCollection }),
  ref: Type.String({ minLength: 1, maxLength: LIMITS.ref })
}, {
  additionalProperties: false,
  description: 'A component: its path, the collection it comes from and its reference there. Without `type`, a member whose path is ' +
    'one string and that has sourceCollection and ref is a component; it is kept without one.'
})

export const Member = Type.Ref(component('ComponentGroupMember', Type.Union([FolderMember, ComponentMember], { description: 'A member: a folder or a component.' })))
export type Member = Static<typeof Member>
const Members = Type.Array(Member, { maxItems: LIMITS.members })

/** A component group as every response carries it (spec 2.1): always every field. */
export const ComponentGroupObject = component('ComponentGroup', Type.Object({
  _id: Id,
  name: Name,
  description: Description,
  members: Members,
  gbacRead: GbacRead,
  gbacWrite: GbacWrite,
  version: Version,
  meta: Meta
}, { description: 'A component group.' }))
export const ComponentGroup = Type.Ref(ComponentGroupObject)
export type ComponentGroup = Static<typeof ComponentGroupObject>

// The fields a writer sets; name, gbacRead and members are required, as on the platform.
const writable = {
  name: Name,
  description: Type.Optional(Type.String({ maxLength: LIMITS.description, default: '' })),
  members: Members,
  gbacRead: GbacRead,
  gbacWrite: Type.Optional(Type.Array(Group, { uniqueItems: true, maxItems: LIMITS.groups, default: [] })),
  meta: Type.Optional(FreeFormObject({ default: {}, description: 'Free-form metadata.', maxDepth: LIMITS.metaDepth, maxBytes: LIMITS.metaBytes }))
}

/**
 * What a create or an import takes, as the platform's reference allows it: `_id` and `version`
 * (any number) are accepted (exports carry them) and ignored; `members` may be one member.
 */
export const ComponentGroupCreate = Type.Object({
  _id: Type.Optional(Type.String({ maxLength: 64, description: 'Ignored: the service makes the id.' })),
  version: Type.Optional(Type.Number({ description: 'Any number, ignored: a new group starts at version 1.' })),
  ...writable,
  members: Type.Union([Members, Member], { description: 'A list of members, or one member (stored as a list of one).' })
}, { additionalProperties: false })
export type ComponentGroupCreate = Static<typeof ComponentGroupCreate>

/** The replacement document of PUT (spec 2.2): every writable field; absent optional ones get their defaults. */
export const ComponentGroupUpdate = Type.Object({
  version: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 2_147_483_647,
    description: 'The version this replacement is based on; a stale one is refused (409). Same as If-Match.'
  })),
  ...writable
}, { additionalProperties: false, description: 'The whole new document. `_id` may not be given.' })
export type ComponentGroupUpdate = Static<typeof ComponentGroupUpdate>

/** The fields every write stores, defaults applied. */
export type ComponentGroupFields = Pick<ComponentGroup, 'name' | 'description' | 'members' | 'gbacRead' | 'gbacWrite' | 'meta'>

export const IdParams = Type.Object({ id: Id })

/**
 * The list language on component groups: sorted by name (byte order, as the platform) or _id,
 * filtered on the name. Each is served by an index (migrations 006, 007).
 */
export const COMPONENT_GROUP_LIST = {
  idField: '_id',
  fields: ['_id', 'name', 'description', 'members', 'gbacRead', 'gbacWrite', 'version', 'meta'],
  sortable: ['name', '_id'],
  defaultSort: 'name',
  filterable: ['name'],
  defaultFilterField: 'name',
  maxLimit: 100,
  maxValueLength: LIMITS.name
} as const satisfies ListSpec

export const ListQuery = listQuerySchema(COMPONENT_GROUP_LIST)
export type ListQuery = Static<typeof ListQuery>
export const FetchQuery = ProjectionQuery

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'A version this write is based on, as an ETag: "3". A stale one is refused (409).' }))
})

const ETagHeader = { ETag: Type.String({ description: 'The version of the document, quoted: "3".' }) }
const withETag = <T extends object>(schema: T): T => ({ ...schema, headers: ETagHeader })

export const CreateBody = Type.Object({ componentGroup: ComponentGroupCreate }, { additionalProperties: false })
export const ReplaceBody = Type.Object({ update: Type.Optional(ComponentGroupUpdate) }, { additionalProperties: false })
export const ImportBody = Type.Object({
  componentGroups: Type.Array(ComponentGroupCreate, { maxItems: LIMITS.importCount })
}, { additionalProperties: false })

export const Created = withETag(Type.Object({ created: ComponentGroup, edit: Type.String({ description: 'Link to the edit page.' }) }))
export const Updated = withETag(Type.Object({ updated: ComponentGroup, edit: Type.String({ description: 'Link to the edit page.' }) }))
export const Fetched = withETag(Type.Partial(ComponentGroupObject, { description: 'A component group: every field unless include or exclude says otherwise.' }))
export const Deleted = Type.Object({
  message: Type.String({ description: 'What happened, as the platform says it.' }),
  /** The group as it was when deleted (beside the platform's answer). */
  deleted: ComponentGroup
})
export const Page = Type.Ref(component('ComponentGroupPage', pageSchema(ComponentGroupObject, 'The component groups of the page that you may read.')))
export const ImportResult = Type.Object({
  success: Type.Boolean({ description: 'Always true: an import stores every group or none.' }),
  message: Type.String({ description: 'What was imported, and under which name.' }),
  original: Type.Unknown({ description: 'The group as given in the request.' }),
  /** The group as stored: a new _id, version 1, its name made unique. */
  created: ComponentGroup
})
export const Imported = Type.Object({ imported: Type.Array(ImportResult, { description: 'One result per group, in the order given.' }) })
