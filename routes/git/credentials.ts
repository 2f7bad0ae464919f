import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { CredentialsForbidden, CredentialsNotFound } from '../../lib/git/errors.js'
import { UserNotFound } from '../../lib/auth/errors.js'
import type { GitProvider } from '../../lib/git/providers.js'
import { Deleted, errorResponses } from '../../schemas/common.js'
import { GitCredentialsBody, GitCredentialsParams, GitCredentialsStored } from '../../schemas/git.js'
import { gitParams } from './params.js'
import { callerOf } from '../../lib/auth/roles.js'

/**
 * Each user's own Git token per provider, as users of the platform keep their GitHub or GitLab
 * token in their settings. Registered under /users. Write-only: no route answers the token.
 */
const gitCredentialsRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const params = gitParams(fastify)

  /** The provider, once the caller may manage `username`'s credentials and that user exists. */
  async function checked (request: FastifyRequest, { username, gitType }: { username: string, gitType: string }): Promise<GitProvider> {
    const caller = callerOf(request).user
    if (caller.username !== username && !caller.roles.includes('admin')) throw new CredentialsForbidden()
    const provider = params.provider(gitType)
    if (await fastify.usersRepository.get(username) === undefined) throw new UserNotFound(username)
    return provider
  }

  fastify.put('/:username/git-credentials/:gitType', {
    schema: {
      summary: "Store a user's own token for a Git provider",
      description: "The user's Git calls to the provider go with this token (HTTP Basic, with `username` or `x-access-token`) " +
        "instead of the provider's configured one, and their commits are authored by them. Encrypted at rest, never returned " +
        'or logged; a second PUT replaces it. By that user or an admin.',
      tags: ['git', 'users'],
      params: GitCredentialsParams,
      body: GitCredentialsBody,
      response: { 200: GitCredentialsStored, ...errorResponses(400, 403, 404) }
    }
  }, async (request) => {
    request.audit('git.credentials.store', request.params.username, { gitType: request.params.gitType })
    const provider = await checked(request, request.params)
    await fastify.git.credentials.set(request.params.username, provider, request.body)
    request.log.info({ username: request.params.username, gitProvider: provider.name }, 'Git credentials stored')
    return { username: request.params.username, gitType: provider.name, stored: true as const }
  })

  fastify.delete('/:username/git-credentials/:gitType', {
    schema: {
      summary: "Remove a user's own token for a Git provider",
      description: "The user's Git calls to the provider use its configured token again. 404 when none was stored. By that user or an admin.",
      tags: ['git', 'users'],
      params: GitCredentialsParams,
      response: { 200: Deleted, ...errorResponses(400, 403, 404) }
    }
  }, async (request) => {
    request.audit('git.credentials.remove', request.params.username, { gitType: request.params.gitType })
    const provider = await checked(request, request.params)
    if (!(await fastify.git.credentials.remove(request.params.username, provider))) {
      throw new CredentialsNotFound(request.params.username, provider.name)
    }
    request.log.info({ username: request.params.username, gitProvider: provider.name }, 'Git credentials removed')
    return { deleted: true }
  })
}

export default gitCredentialsRoutes
