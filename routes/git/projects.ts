import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { WRITERS } from '../../lib/auth/roles.js'
import { HttpError } from '../../lib/http/errors.js'
import { SPECIAL_PATHS, validateBranchName, validateProjectPath, validateRepoPath, type SpecialPath } from '../../lib/git/paths.js'
import type { CheckResult } from '../../lib/http/check-result.js'
import { canonicalJson, commitAuthor, commitMessage } from '../../lib/git/commit.js'
import { blobEtag, parseBlobIfMatch } from '../../lib/git/etag.js'
import type { GitProvider } from '../../lib/git/providers.js'
import { errorResponses } from '../../schemas/common.js'
import {
  BranchList, CreateBranchBody, CreateBranchPlatformBody, CreateBranchResponse, GitBranchParams, GitProjectParams, GitRepoParams, GitTypeParams,
  InitializeProjectBody, InitializeProjectResponse, ReadProjectResponse, UpdateProjectBody, UpdateProjectResponse
} from '../../schemas/git.js'

function valid<T> (result: CheckResult<T>): T {
  if (!result.ok) throw new HttpError(400, result.reason)
  return result.value
}

/** Project files are only read from special paths (.gitmodules, .github/...), never written there unless allowed. */
const READABLE = new Set(SPECIAL_PATHS)

const PROJECT = '/:gitType/repos/:repoPath/branches/:branchName/projects/:projectPath'

/** A project file's body as stored: JSON as JSON, other UTF-8 text as text, anything else as bytes. */
function projectContentType (content: Buffer): string {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(content)
  } catch {
    return 'application/octet-stream'
  }
  try {
    JSON.parse(text)
    return 'application/json; charset=utf-8'
  } catch {
    return 'text/plain; charset=utf-8'
  }
}

/** Git (spec 4.2, and the platform's other Git calls). */
const gitRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const providerNames = [...fastify.git.providers.values()].map((p) => p.name).join(', ')
  const failures = `Providers: ${providerNames}. Provider unreachable, refusing the credentials or the push, answering more than ` +
    'GIT_MAX_RESPONSE_BYTES, or holding a tree Git refuses: 502; no answer in time: 504; repository missing: 404. ' +
    "Calls go to the provider with the caller's own token when they stored one (PUT /users/:username/git-credentials/:gitType), " +
    "else with the provider's configured token."

  function provider (gitType: string): GitProvider {
    const found = fastify.git.provider(gitType)
    if (found === undefined) throw new HttpError(400, `Unknown Git provider "${gitType}"; configured: ${providerNames}`)
    return found
  }

  /** The repository and caller every Git call starts from, checked. */
  function target (request: FastifyRequest, params: { gitType: string, repoPath: string }) {
    return {
      provider: provider(params.gitType),
      repoPath: valid(validateRepoPath(params.repoPath)),
      caller: request.user.username,
      log: request.log
    }
  }

  /** A project file's repository, branch and path, checked, in that order; `specialPaths` may be named. */
  function projectTarget (request: FastifyRequest, params: Static<typeof GitProjectParams>, specialPaths: ReadonlySet<SpecialPath>) {
    return {
      ...target(request, params),
      branch: valid(validateBranchName(params.branchName)),
      projectPath: valid(validateProjectPath(params.projectPath, { allowedSpecialPaths: specialPaths }))
    }
  }

  fastify.post(PROJECT, {
    config: { roles: WRITERS },
    schema: {
      summary: 'Initialize a project in a repository of a Git provider',
      description: 'Writes `project` as JSON (2-space indent, trailing newline) to a new file at `projectPath`, in one ' +
        'commit authored by the caller, pushed to `branchName` (created from the default branch when missing). ' +
        'An existing file or directory at that path is a 409 and nothing is pushed. The answer carries the file\'s `ETag`. ' + failures,
      tags: ['git'],
      params: GitProjectParams,
      body: InitializeProjectBody,
      response: { 200: InitializeProjectResponse, ...errorResponses(400, 404, 409, 502, 503, 504) }
    }
  }, async (request, reply) => {
    const file = projectTarget(request, request.params, fastify.git.allowedSpecialPaths)
    const message = valid(commitMessage(request.body.commitMessage, file.projectPath))
    const project = request.body.project ?? {}
    const result = await fastify.git.initializeProject({
      ...file, content: canonicalJson(project), message, author: commitAuthor(request.user, new Date())
    })
    request.log.info({ provider: file.provider.name, repository: file.repoPath, branch: file.branch, projectPath: file.projectPath, ...result },
      'project initialized in Git')
    void reply.header('etag', blobEtag(result.blob))
    return { message: 'Successfully initialized project', data: project }
  })

  fastify.get(PROJECT, {
    schema: {
      summary: 'Retrieve a project from Git',
      description: 'The exact contents of the project file on `branchName` as the provider has it now: the branch\'s tip is ' +
        'asked of the provider on every call and the cache fetched when it is behind. Missing repository, branch or file: 404 ' +
        'naming which. ' + failures,
      tags: ['git'],
      params: GitProjectParams,
      response: { 200: ReadProjectResponse, ...errorResponses(400, 404, 502, 504) }
    }
  }, async (request, reply) => {
    const result = await fastify.git.readProject(projectTarget(request, request.params, READABLE))
    return await reply
      .header('etag', blobEtag(result.blob))
      .header('x-git-commit', result.commit)
      .header('cache-control', 'no-cache')
      .type(projectContentType(result.content))
      .send(result.content)
  })

  fastify.put(PROJECT, {
    config: { roles: WRITERS },
    schema: {
      summary: 'Update a project in Git',
      description: 'Replaces the existing file at `projectPath` with `project` (as initialization writes it) in one commit ' +
        'authored by the caller, pushed to `branchName`. A missing file, branch or repository is a 404 (initialization creates, ' +
        'update replaces). A document equal to the file makes no commit and says so. When another writer moves the branch ' +
        'meanwhile, their commit stays and this one is made again on top. Optional optimistic concurrency: send the `ETag` of a ' +
        'read in `If-Match`; a file changed since is a 409 and nothing is pushed. ' + failures,
      tags: ['git'],
      params: GitProjectParams,
      body: UpdateProjectBody,
      response: { 200: UpdateProjectResponse, ...errorResponses(400, 404, 409, 502, 503, 504) }
    }
  }, async (request, reply) => {
    const file = projectTarget(request, request.params, fastify.git.allowedSpecialPaths)
    const message = valid(commitMessage(request.body.commitMessage, file.projectPath, 'Update'))
    const ifMatch = valid(parseBlobIfMatch(request.headers['if-match']))
    const { project } = request.body
    const result = await fastify.git.updateProject({
      ...file, content: canonicalJson(project), message, author: commitAuthor(request.user, new Date()), ifMatch
    })
    request.log.info({ provider: file.provider.name, repository: file.repoPath, branch: file.branch, projectPath: file.projectPath, ...result },
      'project updated in Git')
    void reply.header('etag', blobEtag(result.blob))
    return {
      message: result.commit === undefined ? 'Project unchanged: nothing committed' : 'Successfully updated project',
      data: project
    }
  })

  fastify.get('/:gitType/repos/:repoPath/branches', {
    schema: {
      summary: 'List the available branches for a repository',
      description: 'The branch names and the default branch, from the provider\'s advertisement at the time of the call. ' + failures,
      tags: ['git'],
      params: GitRepoParams,
      response: { 200: BranchList, ...errorResponses(400, 404, 502, 504) }
    }
  }, async (request) => {
    const result = await fastify.git.listBranches(target(request, request.params))
    return { branches: result.branches, defaultBranch: result.defaultBranch ?? null }
  })

  async function createBranch (request: FastifyRequest, params: { gitType: string, repoPath: string }, branchName: string, originBranch: string | undefined) {
    const base = target(request, params)
    const branch = valid(validateBranchName(branchName))
    const origin = originBranch === undefined ? undefined : valid(validateBranchName(originBranch))
    const result = await fastify.git.createBranch({ ...base, branch, originBranch: origin })
    request.log.info({ provider: base.provider.name, repository: base.repoPath, branch, ...result }, 'branch created in Git')
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
      response: { 200: CreateBranchResponse, ...errorResponses(400, 404, 409, 502, 504) }
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
      response: { 200: CreateBranchResponse, ...errorResponses(400, 404, 409, 502, 504) }
    }
  }, async (request) => await createBranch(request, request.params, request.body.newBranch, request.body.originBranch))

  const createRepository = async (request: FastifyRequest<{ Params: { gitType: string } }>): Promise<never> => {
    const found = provider(request.params.gitType)
    throw new HttpError(501, `Creating a repository needs the REST API of Git provider ${found.name}, and none is configured: ` +
      'this service speaks Git to providers, which cannot create repositories. Create it on the provider, then initialize projects in it.',
    { code: 'GIT_REPOSITORY_API_MISSING' })
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

  // Trailing slashes are ignored, so `.../projects/` (an empty projectPath) arrives here: it is
  // the empty path it looks like, not an unknown route.
  for (const method of ['GET', 'POST', 'PUT'] as const) {
    fastify.route({
      method,
      url: '/:gitType/repos/:repoPath/branches/:branchName/projects',
      config: { roles: method === 'GET' ? undefined : WRITERS },
      schema: { hide: true, response: errorResponses(400) },
      handler: async () => valid(validateProjectPath(''))
    })
  }
}

export default gitRoutes
