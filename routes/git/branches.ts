import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { WRITERS } from '../../lib/auth/roles.js'
import { errorResponses } from '../../schemas/common.js'
import { BranchList, CreateBranchBody, CreateBranchPlatformBody, CreateBranchResponse, GitBranchParams, GitRepoParams } from '../../schemas/git.js'
import { branchName, gitParams } from './params.js'

/** A repository's branches (the platform's Git branch calls): listed, and created from another. */
const gitBranchesRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { target, failures } = gitParams(fastify)

  fastify.get('/:gitType/repos/:repoPath/branches', {
    schema: {
      summary: 'List the available branches for a repository',
      description: 'The branch names and the default branch, from the provider\'s advertisement at the time of the call. ' + failures,
      tags: ['git'],
      params: GitRepoParams,
      response: { 200: BranchList, ...errorResponses(400, 404, 502, 503, 504) }
    }
  }, async (request) => {
    const result = await fastify.git.listBranches(target(request, request.params))
    return { branches: result.branches, defaultBranch: result.defaultBranch ?? null }
  })

  async function createBranch (request: FastifyRequest, params: { gitType: string, repoPath: string }, name: string, originBranch: string | undefined) {
    request.audit('git.branch.create', `${params.gitType}:${params.repoPath}`, { branch: name, origin: originBranch ?? null })
    const base = target(request, params)
    const branch = branchName(name)
    const origin = originBranch === undefined ? undefined : branchName(originBranch)
    const result = await fastify.git.createBranch({ ...base, branch, originBranch: origin })
    request.log.info({ provider: base.provider.name, repository: base.repoPath, branch, ...result }, 'branch created in Git')
    request.audit('git.branch.create', `${base.provider.name}:${base.repoPath}`, { commit: result.commit })
    return { message: `Successfully created branch: ${branch}` }
  }
  const createBranchDescription = 'Creates the branch at the tip of `originBranch` (the default branch when absent) on the provider. ' +
    'A branch of that name already there: 409; origin missing: 404. ' + failures

  fastify.post('/:gitType/repos/:repoPath/branches/:branchName', {
    config: { roles: WRITERS },
    schema: {
      summary: 'Create a new branch in a repository',
      description: createBranchDescription,
      tags: ['git'],
      params: GitBranchParams,
      body: CreateBranchBody,
      response: { 200: CreateBranchResponse, ...errorResponses(400, 404, 409, 502, 503, 504) }
    }
  }, async (request) => await createBranch(request, request.params, request.params.branchName, request.body.originBranch))

  fastify.post('/:gitType/repos/:repoPath/branches', {
    config: { roles: WRITERS },
    schema: {
      summary: 'Create a new branch in a repository (the platform\'s form: the name in the body)',
      description: createBranchDescription,
      tags: ['git'],
      params: GitRepoParams,
      body: CreateBranchPlatformBody,
      response: { 200: CreateBranchResponse, ...errorResponses(400, 404, 409, 502, 503, 504) }
    }
  }, async (request) => await createBranch(request, request.params, request.body.newBranch, request.body.originBranch))
}

export default gitBranchesRoutes
