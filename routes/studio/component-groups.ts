import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { ADMINS, WRITERS, callerOf } from '../../lib/auth/roles.js'
import { InvalidListParameter } from '../../lib/lists/errors.js'
import { listPage } from '../../lib/lists/page.js'
import { parseProjection, project } from '../../lib/lists/projection.js'
import {
  ComponentGroupNotFound, ComponentGroupVersionNotFound, ImportTimeout, ImportTooLarge, InvalidVersionCondition, nameTaken
} from '../../lib/studio/errors.js'
import { DELETED_LIST, VERSION_LIST, wantsDocument, type Actor } from '../../lib/studio/history.js'
import { DeletedPage, Version, VersionParams, VersionsPage, VersionsQuery } from '../../schemas/component-group-history.js'
import { expectedVersions, parseVersionIfMatch, versionEtag, type ExpectedVersions } from '../../lib/studio/if-match.js'
import { refusalError } from '../../lib/studio/outcomes.js'
import { bypassesGbac } from '../../lib/studio/gbac.js'
import { errorResponses } from '../../schemas/common.js'
import {
  COMPONENT_GROUP_LIST, CreateBody, Created, Deleted, FetchQuery, Fetched, IdParams, IfMatchHeaders, Imported,
  ImportBody, ListQuery, Page, ReplaceBody, Updated
} from '../../schemas/component-groups.js'

/** The versions a write is conditional on, from If-Match and an optional body version. */
function writeCondition (ifMatchHeader: string | undefined, bodyVersion?: number): ExpectedVersions {
  const ifMatch = parseVersionIfMatch(ifMatchHeader)
  if (!ifMatch.ok) throw new InvalidVersionCondition(ifMatch.reason)
  const expected = expectedVersions(ifMatch.value, bodyVersion)
  if (!expected.ok) throw new InvalidVersionCondition(expected.reason)
  return expected.value
}

export interface ComponentGroupRoutesOptions {
  prefix: string
  /** The studio UI path the `edit` links point at: `/studio/` or the platform's `/automation-studio/`. */
  editPage: string
}

/** Who makes a change: the caller as it authenticated. */
function actorOf (request: FastifyRequest): Actor {
  const { user, auth } = callerOf(request)
  const { clientId } = auth
  return { username: user.username, method: auth.method, ...(clientId === undefined ? {} : { clientId }) }
}

/**
 * Studio component groups (spec 4.1 and the platform's other operations). Reads: any user, within
 * the document's gbacRead; writes: WRITERS, within gbacRead and gbacWrite. `version` grows by 1
 * with every replacement; If-Match (or update.version) makes a write conditional.
 */
const componentGroups: FastifyPluginAsyncTypebox<ComponentGroupRoutesOptions> = async (fastify, options) => {
  const repo = fastify.componentGroupsRepository
  const tags = ['studio']
  const writers = { roles: WRITERS }
  const edit = (request: FastifyRequest, id: string): string => request.publicUrl(`${options.editPage}#/edit?tab=0&component-group=${id}`)

  fastify.get('/', {
    schema: {
      summary: 'List the component groups you may read, a page at a time',
      description: 'The platform\'s list language: limit (default 25, at most 100), skip, sort (name or _id), order (1 or -1), ' +
        'include / exclude, and equals, contains, starts-with on the name (or the field equalsField, containsField, ' +
        'startsWithField names), also in the bracket forms equals[name], contains[name], starts-with[name], in[name] and not-in[name] ' +
        '(in and not-in: repeat the parameter per value). A page also stops at about LIST_MAX_PAGE_BYTES (default 8 MiB) of items, one item always; ' +
        '`next` goes on from there.',
      tags,
      querystring: ListQuery,
      response: { 200: Page, ...errorResponses(400) }
    }
  }, async (request) => {
    return await listPage(COMPONENT_GROUP_LIST, request.query, fastify.config, async (list) => await repo.list(callerOf(request).user, list))
  })

  fastify.post('/', {
    config: writers,
    schema: {
      summary: 'Create a component group (version 1, a new _id)',
      tags,
      body: CreateBody,
      response: { 200: Created, ...errorResponses(400, 409) }
    }
  }, async (request, reply) => {
    const input = request.body.componentGroup
    request.audit('studio.create', input.name)
    const created = await repo.create(input, actorOf(request))
    if (created === undefined) throw nameTaken(input.name)
    request.audit('studio.create', created._id, { name: created.name, version: created.version })
    void reply.header('etag', versionEtag(created.version))
    return { created, edit: edit(request, created._id) }
  })

  fastify.post('/import', {
    config: writers,
    schema: {
      summary: 'Import component groups: all or none, each with a new _id; a taken name gets a numeric suffix',
      description: 'At most STUDIO_IMPORT_MAX_GROUPS groups (default 500) per import, within STUDIO_IMPORT_TIMEOUT_MS ' +
        '(default 30 s; past it nothing is stored and the answer is 503).',
      tags,
      body: ImportBody,
      response: { 200: Imported, ...errorResponses(400, 409, 503) }
    }
  }, async (request) => {
    const { componentGroups: inputs } = request.body
    request.audit('studio.import', 'component-groups', { groups: inputs.length })
    const max = fastify.config.STUDIO_IMPORT_MAX_GROUPS
    if (inputs.length > max) throw new ImportTooLarge(max, inputs.length)
    const outcome = await repo.importAll(inputs, fastify.config.STUDIO_IMPORT_TIMEOUT_MS, actorOf(request))
    if ('refusal' in outcome) {
      if (outcome.refusal === 'name-taken') throw nameTaken()
      throw new ImportTimeout(fastify.config.STUDIO_IMPORT_TIMEOUT_MS)
    }
    request.audit('studio.import', 'component-groups', { ids: outcome.created.map((c) => c._id).join(',') })
    return {
      imported: outcome.created.map((created, i) => {
        const original = inputs[i] as (typeof inputs)[number]
        const renamed = created.name === original.name ? '' : ` as "${created.name}" (the name was taken)`
        return { success: true, message: `Imported component group "${original.name}"${renamed}`, original, created }
      })
    }
  })

  fastify.get('/:id', {
    schema: {
      summary: 'Get a component group',
      description: 'include / exclude as on the list: only some fields, or all but some.',
      tags,
      params: IdParams,
      querystring: FetchQuery,
      response: { 200: Fetched, ...errorResponses(400, 404) }
    }
  }, async (request, reply) => {
    const projection = parseProjection(COMPONENT_GROUP_LIST, request.query)
    if (!projection.ok) throw new InvalidListParameter(projection.reason)
    const doc = await repo.get(callerOf(request).user, request.params.id)
    if (doc === undefined) throw new ComponentGroupNotFound(request.params.id)
    void reply.header('etag', versionEtag(doc.version))
    return project(doc, projection.value)
  })

  fastify.put('/:id', {
    config: writers,
    schema: {
      summary: 'Replace a component group document (spec 4.1)',
      description: 'Replaces name, description, members, gbacRead, gbacWrite and meta with `update` and adds 1 to ' +
        '`version`. Without `update` the document is returned unchanged. With If-Match or `update.version`, a ' +
        'stale version is refused with 409 and nothing changes.',
      tags,
      params: IdParams,
      headers: IfMatchHeaders,
      body: ReplaceBody,
      response: { 200: Updated, ...errorResponses(400, 404, 409) }
    }
  }, async (request, reply) => {
    const { id } = request.params
    const { update } = request.body
    request.audit(update === undefined ? 'studio.check' : 'studio.replace', id)
    const expected = writeCondition(request.headers['if-match'], update?.version)
    const outcome = update === undefined
      ? await repo.checkWritable(callerOf(request).user, id, expected)
      : await repo.replace(callerOf(request).user, id, update, expected, actorOf(request))
    if ('refusal' in outcome) throw refusalError(outcome.refusal, id, update?.name)
    void reply.header('etag', versionEtag(outcome.doc.version))
    request.audit(update === undefined ? 'studio.check' : 'studio.replace', id, { name: outcome.doc.name, version: outcome.doc.version })
    return { updated: outcome.doc, edit: edit(request, id) }
  })

  fastify.delete('/:id', {
    config: writers,
    schema: {
      summary: 'Delete a component group',
      description: 'With If-Match, only while the version is still the one given (409 otherwise). Answers the ' +
        'platform\'s `{message}`, plus the group as it was in `deleted`.',
      tags,
      params: IdParams,
      headers: IfMatchHeaders,
      response: { 200: Deleted, ...errorResponses(400, 404, 409) }
    }
  }, async (request) => {
    const { id } = request.params
    request.audit('studio.delete', id)
    const outcome = await repo.remove(callerOf(request).user, id, writeCondition(request.headers['if-match']), actorOf(request))
    if ('refusal' in outcome) throw refusalError(outcome.refusal, id)
    return { message: `Component group "${id}" deleted`, deleted: outcome.doc }
  })

  // History (docs/studio.md): a version is shown with the access rules its group has now.
  fastify.get('/deleted', {
    config: { roles: ADMINS },
    schema: {
      summary: 'List the deleted component groups (admins), the latest delete first',
      description: 'Each item is the group\'s delete entry; include=document adds the group as it was when deleted. ' +
        'Restore one with POST /{id}/versions/{version}/restore.',
      tags,
      querystring: VersionsQuery,
      response: { 200: DeletedPage, ...errorResponses(400) }
    }
  }, async (request) => {
    return await listPage(DELETED_LIST, request.query, fastify.config, async (list) => await repo.versions.deleted(list, wantsDocument(list.projection)))
  })

  fastify.get('/:id/versions', {
    schema: {
      summary: 'List a component group\'s versions, newest first',
      description: 'limit, skip, include / exclude as on the list; the documents only with include=document. ' +
        'Admins also read a deleted group\'s versions.',
      tags,
      params: IdParams,
      querystring: VersionsQuery,
      response: { 200: VersionsPage, ...errorResponses(400, 404) }
    }
  }, async (request) => {
    const { id } = request.params
    return await listPage(VERSION_LIST, request.query, fastify.config, async (list) => {
      const page = await repo.versions.page(callerOf(request).user, id, list, wantsDocument(list.projection))
      // Nothing listed: the group may be one the caller may not read, or not be at all.
      if (page.total === 0 && await repo.get(callerOf(request).user, id) === undefined) throw new ComponentGroupNotFound(id)
      return page
    })
  })

  fastify.get('/:id/versions/:version', {
    schema: {
      summary: 'Get one version of a component group, with its document',
      tags,
      params: VersionParams,
      response: { 200: Version, ...errorResponses(400, 404) }
    }
  }, async (request) => {
    const { id, version } = request.params
    // Readable now, or (admins) deleted with its history kept.
    const group = await repo.get(callerOf(request).user, id)
    if (group === undefined && !bypassesGbac(callerOf(request).user)) throw new ComponentGroupNotFound(id)
    const entry = await repo.versions.version(id, version)
    if (entry !== undefined) return entry
    if (group === undefined && await repo.versions.latest(id) === undefined) throw new ComponentGroupNotFound(id)
    throw new ComponentGroupVersionNotFound(id, version)
  })

  fastify.post('/:id/versions/:version/restore', {
    config: writers,
    schema: {
      summary: 'Restore a version: its content becomes the next version',
      description: 'A change like a PUT (history, group access, If-Match on the current version, the name still ' +
        'unique). A deleted group (admins) comes back under its id; If-Match then names its delete version.',
      tags,
      params: VersionParams,
      headers: IfMatchHeaders,
      response: { 200: Updated, ...errorResponses(400, 404, 409) }
    }
  }, async (request, reply) => {
    const { id, version } = request.params
    request.audit('studio.restore', id, { version })
    const outcome = await repo.restore(callerOf(request).user, id, version, writeCondition(request.headers['if-match']), actorOf(request))
    if ('refusal' in outcome) {
      if (outcome.refusal === 'version-not-found') throw new ComponentGroupVersionNotFound(id, version)
      throw refusalError(outcome.refusal, id)
    }
    request.audit('studio.restore', id, { name: outcome.doc.name, version: outcome.doc.version, from: version })
    void reply.header('etag', versionEtag(outcome.doc.version))
    return { updated: outcome.doc, edit: edit(request, id) }
  })
}

export default componentGroups
