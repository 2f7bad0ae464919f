import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { WRITERS } from '../../plugins/auth.js'
import { HttpError } from '../../lib/http/errors.js'
import { validateBranchName, validateProjectPath, validateRepoPath } from '../../lib/git/paths.js'
import type { CheckResult } from '../../lib/http/check-result.js'
import { canonicalJson, commitAuthor, commitMessage } from '../../lib/git/commit.js'
import { errorResponses } from '../../schemas/common.js'
import { GitProjectParams, InitializeProjectBody, InitializeProjectResponse } from '../../schemas/git.js'

function valid<T> (result: CheckResult<T>): T {
  if (!result.ok) throw new HttpError(400, result.reason)
  return result.value
}

/** Git projects (spec 4.2). */
const gitProjects: FastifyPluginAsyncTypebox = async (fastify) => {
  const providerNames = [...fastify.git.providers.values()].map((p) => p.name).join(', ')

  fastify.post('/:gitType/repos/:repoPath/branches/:branchName/projects/:projectPath', {
    config: { roles: WRITERS },
    schema: {
      summary: 'Initialize a project in a repository of a Git provider',
      description: 'Writes `project` as JSON (2-space indent, trailing newline) to a new file at `projectPath`, in one ' +
        'commit authored by the caller, pushed to `branchName` (created from the default branch when missing). ' +
        'An existing file or directory at that path is a 409 and nothing is pushed. ' +
        `Providers: ${providerNames}. Provider unreachable, refusing the credentials or the push: 502; ` +
        'no answer in time: 504; repository missing: 404.',
      tags: ['git'],
      params: GitProjectParams,
      body: InitializeProjectBody,
      response: { 200: InitializeProjectResponse, ...errorResponses(400, 404, 409, 502, 503, 504) }
    },
    // Both fields are optional, so a request may come without a body at all (`curl -X POST`).
    preValidation: async (request) => { request.body ??= {} }
  }, async (request) => {
    const { gitType } = request.params
    const provider = fastify.git.provider(gitType)
    if (provider === undefined) {
      throw new HttpError(400, `Unknown Git provider "${gitType}"; configured: ${providerNames}`)
    }
    const repoPath = valid(validateRepoPath(request.params.repoPath))
    const branch = valid(validateBranchName(request.params.branchName))
    const projectPath = valid(validateProjectPath(request.params.projectPath))
    const message = valid(commitMessage(request.body.commitMessage, projectPath))
    const project = request.body.project ?? {}

    const result = await fastify.git.initializeProject({
      provider,
      repoPath,
      branch,
      projectPath,
      content: canonicalJson(project),
      message,
      author: commitAuthor(request.user, new Date()),
      log: request.log
    })
    request.log.info({ provider: provider.name, repository: repoPath, branch, projectPath, ...result }, 'project initialized in Git')
    return { message: 'Successfully initialized project', data: project }
  })

  // Trailing slashes are ignored, so `.../projects/` (an empty projectPath) arrives here: it is
  // the empty path it looks like, not an unknown route.
  fastify.post('/:gitType/repos/:repoPath/branches/:branchName/projects', {
    config: { roles: WRITERS },
    schema: { hide: true, response: errorResponses(400) }
  }, async () => valid(validateProjectPath('')))
}

export default gitProjects
