import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { WRITERS } from '../../lib/auth/roles.js'
import { RepositoryApiMissing } from '../../lib/git/errors.js'
import { errorResponses } from '../../schemas/common.js'
import { GitRepoParams, GitTypeParams } from '../../schemas/git.js'
import { gitParams } from './params.js'

/** Repositories: the platform may ask to create one, which Git alone cannot do (always a 501). */
const gitRepositoriesRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { provider } = gitParams(fastify)

  const createRepository = async (request: FastifyRequest<{ Params: { gitType: string, repoPath?: string } }>): Promise<never> => {
    request.audit('git.repository.create', `${request.params.gitType}:${request.params.repoPath ?? ''}`)
    throw new RepositoryApiMissing(provider(request.params.gitType).name)
  }
  const createRepositorySchema = {
    summary: 'Create a Git repository',
    description: 'Not available: creating a repository needs the provider\'s own REST API (GitHub, GitLab), which no provider ' +
      'has configured. Always 501 for a known provider (400 for an unknown one).',
    tags: ['git'],
    response: errorResponses(400, 501)
  }

  fastify.post('/:gitType/repos', {
    config: { roles: WRITERS },
    schema: { ...createRepositorySchema, params: GitTypeParams }
  }, createRepository)

  fastify.post('/:gitType/repos/:repoPath', {
    config: { roles: WRITERS },
    schema: { ...createRepositorySchema, params: GitRepoParams }
  }, createRepository)
}

export default gitRepositoriesRoutes
