import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ADMINS } from '../../lib/auth/roles.js'
import { parseTimeRange } from '../../lib/audit/events.js'
import { InvalidAuditTimeRange } from '../../lib/audit/errors.js'
import { listPage } from '../../lib/lists/page.js'
import { errorResponses } from '../../schemas/common.js'
import { AUDIT_LIST, AuditList, AuditListQuery } from '../../schemas/audit.js'

/** The audit trail (admin only): who did what, when, from where, and how it ended. */
const audit: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    config: { roles: ADMINS },
    schema: {
      summary: 'List audit events, newest first, a page at a time',
      description: 'The platform\'s list language: limit (default 25, at most 100), skip, sort (time), order (-1 newest first, the default, or 1), ' +
        'include / exclude, and equals, contains, starts-with on action (default), actor or target; `from` (inclusive) and `to` ' +
        '(exclusive), ISO 8601 dates or date-times with an offset, bound the time. Events are written within a fraction of a second ' +
        'of their request (docs/audit.md).',
      tags: ['audit'],
      querystring: AuditListQuery,
      response: { 200: AuditList, ...errorResponses(400) }
    }
  }, async (request) => {
    return await listPage(AUDIT_LIST, request.query, fastify.config, async (list) => {
      const range = parseTimeRange(request.query)
      if (!range.ok) throw new InvalidAuditTimeRange(range.reason)
      return await fastify.audit.repository.list(list, range.value)
    })
  })
}

export default audit
