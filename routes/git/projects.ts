import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { WRITERS, callerOf } from '../../lib/auth/roles.js'
import { canonicalJson, commitAuthor, commitMessage } from '../../lib/git/commit.js'
import { InvalidCommitMessage, InvalidIfMatch, InvalidProjectPath } from '../../lib/git/errors.js'
import { blobEtag, parseBlobIfMatch } from '../../lib/git/etag.js'
import { SPECIAL_PATHS, validateProjectPath } from '../../lib/git/paths.js'
import { errorResponses } from '../../schemas/common.js'
import {
  GitProjectParams, InitializeProjectBody, InitializeProjectResponse, ReadProjectResponse, UpdateProjectBody, ProjectIfMatchHeaders, UpdateProjectResponse
} from '../../schemas/git.js'
import { checked, gitParams } from './params.js'

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

/** Project files in a repository's branch (spec 4.2): initialize, read, update. */
const gitProjectsRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { projectTarget, failures } = gitParams(fastify)

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
    request.audit('git.project.initialize', `${request.params.gitType}:${request.params.repoPath}`, { branch: request.params.branchName, path: request.params.projectPath })
    const file = projectTarget(request, request.params, fastify.git.allowedSpecialPaths)
    const message = checked(commitMessage(request.body.commitMessage, file.projectPath), InvalidCommitMessage)
    const project = request.body.project ?? {}
    const result = await fastify.git.initializeProject({
      ...file, content: canonicalJson(project), message, author: commitAuthor(callerOf(request).user, new Date())
    })
    request.log.info({ provider: file.provider.name, repository: file.repoPath, branch: file.branch, projectPath: file.projectPath, ...result },
      'project initialized in Git')
    request.audit('git.project.initialize', `${file.provider.name}:${file.repoPath}`, { commit: result.commit })
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
      response: { 200: ReadProjectResponse, ...errorResponses(400, 404, 502, 503, 504) }
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
      headers: ProjectIfMatchHeaders,
      body: UpdateProjectBody,
      response: { 200: UpdateProjectResponse, ...errorResponses(400, 404, 409, 502, 503, 504) }
    }
  }, async (request, reply) => {
    request.audit('git.project.update', `${request.params.gitType}:${request.params.repoPath}`, { branch: request.params.branchName, path: request.params.projectPath })
    const file = projectTarget(request, request.params, fastify.git.allowedSpecialPaths)
    const message = checked(commitMessage(request.body.commitMessage, file.projectPath, 'Update'), InvalidCommitMessage)
    const ifMatch = checked(parseBlobIfMatch(request.headers['if-match']), InvalidIfMatch)
    const { project } = request.body
    const result = await fastify.git.updateProject({
      ...file, content: canonicalJson(project), message, author: commitAuthor(callerOf(request).user, new Date()), ifMatch
    })
    request.log.info({ provider: file.provider.name, repository: file.repoPath, branch: file.branch, projectPath: file.projectPath, ...result },
      'project updated in Git')
    request.audit('git.project.update', `${file.provider.name}:${file.repoPath}`, { commit: result.commit ?? null })
    void reply.header('etag', blobEtag(result.blob))
    return {
      message: result.commit === undefined ? 'Project unchanged: nothing committed' : 'Successfully updated project',
      data: project
    }
  })

  // Trailing slashes are ignored, so `.../projects/` (an empty projectPath) arrives here: it is
  // the empty path it looks like, not an unknown route.
  for (const method of ['GET', 'POST', 'PUT'] as const) {
    fastify.route({
      method,
      url: '/:gitType/repos/:repoPath/branches/:branchName/projects',
      config: { roles: method === 'GET' ? undefined : WRITERS },
      schema: { hide: true, response: errorResponses(400) },
      handler: async () => checked(validateProjectPath(''), InvalidProjectPath)
    })
  }
}

export default gitProjectsRoutes
