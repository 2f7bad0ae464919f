import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ADMINS } from '../../lib/auth/roles.js'
import { UserExists, UserNotFound } from '../../lib/auth/errors.js'
import { listPage } from '../../lib/lists/page.js'
import { Deleted, errorResponses } from '../../schemas/common.js'
import { User, USER_LIST, UserCreate, UserList, UserListQuery, UsernameParams, UserUpdate } from '../../schemas/users.js'
import { userChanges } from '../../lib/audit/changes.js'

/** Users, their roles and groups (admin only). Passwords are write-only. */
const users: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = fastify.usersRepository
  const config = { roles: ADMINS }
  const tags = ['users']

  fastify.get('/', {
    config,
    schema: {
      summary: 'List users, a page at a time',
      description: 'The platform\'s list language: limit (default 25, at most 100), skip, sort (username), order (1 or -1), ' +
        'include / exclude, and equals, contains, starts-with on username or email.',
      tags,
      querystring: UserListQuery,
      response: { 200: UserList, ...errorResponses(400) }
    }
  }, async (request) => {
    return await listPage(USER_LIST, request.query, fastify.config, async (list) => await repo.list(list))
  })

  fastify.post('/', {
    config,
    schema: { summary: 'Create a user', tags, body: UserCreate, response: { 200: User, ...errorResponses(400, 409) } }
  }, async (request) => {
    request.audit('user.create', request.body.username, { roles: (request.body.roles ?? []).join(','), groups: (request.body.groups ?? []).join(',') })
    const user = await repo.create(request.body)
    if (user === undefined) throw new UserExists(request.body.username)
    return user
  })

  fastify.get('/:username', {
    config,
    schema: { summary: 'Get a user', tags, params: UsernameParams, response: { 200: User, ...errorResponses(400, 404) } }
  }, async (request) => {
    const user = await repo.get(request.params.username)
    if (user === undefined) throw new UserNotFound(request.params.username)
    return user
  })

  fastify.put('/:username', {
    config,
    schema: {
      summary: 'Change a user (password, roles, groups, email, disabled); absent fields stay as they are',
      tags,
      params: UsernameParams,
      body: UserUpdate,
      response: { 200: User, ...errorResponses(400, 404, 409) }
    }
  }, async (request) => {
    request.audit('user.update', request.params.username, userChanges(request.body))
    const user = await repo.update(request.params.username, request.body)
    if (user === undefined) throw new UserNotFound(request.params.username)
    return user
  })

  fastify.delete('/:username', {
    config,
    schema: {
      summary: 'Delete a user',
      tags,
      params: UsernameParams,
      response: { 200: Deleted, ...errorResponses(400, 404, 409) }
    }
  }, async (request) => {
    request.audit('user.delete', request.params.username)
    const deleted = await repo.remove(request.params.username)
    if (!deleted) throw new UserNotFound(request.params.username)
    return { deleted }
  })
}

export default users
