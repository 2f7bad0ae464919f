// The checks every Git route makes on its path parameters, in one place: the provider named, then
// the repository, branch and project path, in that order, each refusal a 400 naming the field.
import type { Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { InvalidBranchName, InvalidProjectPath, InvalidRepoPath, UnknownProvider } from '../../lib/git/errors.js'
import { validateBranchName, validateProjectPath, validateRepoPath, type SpecialPath } from '../../lib/git/paths.js'
import type { GitProvider } from '../../lib/git/providers.js'
import type { CatalogErrorConstructor } from '../../lib/http/errors.js'
import type { CheckResult } from '../../lib/http/check-result.js'
import type { GitProjectParams } from '../../schemas/git.js'
import { callerOf } from '../../lib/auth/roles.js'

/** The value a check accepted; its refusal thrown as `Refused`. */
export function checked<T> (result: CheckResult<T>, Refused: CatalogErrorConstructor<[reason: string]>): T {
  if (!result.ok) throw new Refused(result.reason)
  return result.value
}

export const branchName = (name: string): string => checked(validateBranchName(name), InvalidBranchName)

/** The parameters' checks, bound to the providers of `fastify.git`. */
export function gitParams (fastify: FastifyInstance) {
  const providerNames = [...fastify.git.providers.values()].map((p) => p.name).join(', ')

  function provider (gitType: string): GitProvider {
    const found = fastify.git.provider(gitType)
    if (found === undefined) throw new UnknownProvider(gitType, providerNames)
    return found
  }

  /** The repository and caller every Git call starts from, checked. */
  function target (request: FastifyRequest, params: { gitType: string, repoPath: string }) {
    return {
      provider: provider(params.gitType),
      repoPath: checked(validateRepoPath(params.repoPath), InvalidRepoPath),
      caller: callerOf(request).user.username,
      log: request.log
    }
  }

  /** A project file's repository, branch and path, checked, in that order; `specialPaths` may be named. */
  function projectTarget (request: FastifyRequest, params: Static<typeof GitProjectParams>, specialPaths: ReadonlySet<SpecialPath>) {
    return {
      ...target(request, params),
      branch: branchName(params.branchName),
      projectPath: checked(validateProjectPath(params.projectPath, { allowedSpecialPaths: specialPaths }), InvalidProjectPath)
    }
  }

  /** How calls to a provider fail, for the routes' descriptions. */
  const failures = `Providers: ${providerNames}. Provider unreachable, refusing the credentials or the push, answering more than ` +
    'GIT_MAX_RESPONSE_BYTES, or holding a tree Git refuses: 502; no answer in time: 504; repository missing: 404; ' +
    'too many calls to providers at once (GIT_PROVIDER_CONCURRENCY, GIT_PROVIDER_CONCURRENCY_PER_USER): 503 with Retry-After. ' +
    "Calls go to the provider with the caller's own token when they stored one (PUT /users/:username/git-credentials/:gitType), " +
    "else with the provider's configured token."

  return { provider, target, projectTarget, failures }
}
