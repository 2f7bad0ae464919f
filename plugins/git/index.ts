import fp from 'fastify-plugin'
import { Histogram } from 'prom-client'
import { Agent } from 'undici'
import { findProvider, type GitProvider, type GitProviders } from '../../lib/git/providers.js'
import { ProviderBusy } from '../../lib/git/errors.js'
import { withDetails } from '../../lib/http/errors.js'
import { ProviderSlots } from '../../lib/git/provider-slots.js'
import type { SpecialPath } from '../../lib/git/paths.js'
import { gitCaches } from './cache.js'
import { gitCredentialsStore, type GitCredentialsStore } from './credentials-store.js'
import {
  gitProjects, type GitProjects, type GitTarget, type InitializeProjectInput, type InitializeProjectResult, type ReadProjectInput,
  type ReadProjectResult, type UpdateProjectInput, type UpdateProjectResult
} from './projects.js'
import { PushCapabilities } from './push.js'
import { gitBranches, type CreateBranchInput, type CreateBranchResult, type GitBranches, type ListBranchesResult } from './branches.js'

// Git (spec 4.2 and the platform's other Git calls): wires the provider transport
// (transport.ts), the bare caches (cache.ts), our push (push.ts), the operations (projects.ts,
// branches.ts) and the users' own tokens (credentials-store.ts) into Fastify.

/** An operation's input as a route gives it: the caller's name instead of their credentials. */
export type GitCall<T extends GitTarget> = Omit<T, 'user'> & { caller: string }

export interface GitService {
  readonly providers: GitProviders
  /** The provider a `gitType` names, case-insensitively. */
  provider: (gitType: string) => GitProvider | undefined
  /** Special project paths an operator allowed (GIT_ALLOWED_SPECIAL_PATHS). */
  readonly allowedSpecialPaths: ReadonlySet<SpecialPath>
  /** Writes a new file on a branch in one commit; 409 when the path is taken. */
  initializeProject: (input: GitCall<InitializeProjectInput>) => Promise<InitializeProjectResult>
  /** Replaces an existing file in one commit (none when unchanged); 404 when missing, 409 when If-Match fails. */
  updateProject: (input: GitCall<UpdateProjectInput>) => Promise<UpdateProjectResult>
  /** The file as the branch's current tip on the provider has it. */
  readProject: (input: GitCall<ReadProjectInput>) => Promise<ReadProjectResult>
  listBranches: (input: GitCall<GitTarget>) => Promise<ListBranchesResult>
  /** Creates a branch at the tip of another (the default branch unless named); 409 when it exists. */
  createBranch: (input: GitCall<CreateBranchInput>) => Promise<CreateBranchResult>
  /** Users' own tokens: each call uses its caller's token for the provider when there is one. */
  readonly credentials: GitCredentialsStore
}

declare module 'fastify' {
  interface FastifyInstance {
    git: GitService
  }
}

/** Retry-After of a GIT_PROVIDER_BUSY refusal, in seconds. */
export const PROVIDER_BUSY_RETRY_AFTER_S = 5

const OPERATIONS = {
  initializeProject: 'initialize_project',
  updateProject: 'update_project',
  readProject: 'read_project',
  listBranches: 'list_branches',
  createBranch: 'create_branch'
} as const

/** `fastify.git`: providers, the clone cache under DATA_DIR/git, and the locks around pushes. */
export default fp(async (fastify) => {
  const { config } = fastify
  const providers = config.gitProviders
  const dispatcher = new Agent()
  const maxResponseBytes = config.GIT_MAX_RESPONSE_BYTES
  const pushCapabilities = new PushCapabilities()
  const operations: GitProjects & GitBranches = {
    ...gitProjects({
      db: fastify.db,
      caches: gitCaches(config.DATA_DIR, { maxBytes: config.GIT_CACHE_MAX_BYTES, maxRepositories: config.GIT_CACHE_MAX_REPOSITORIES }),
      pushCapabilities,
      dispatcher,
      maxResponseBytes,
      projectMaxBytes: config.GIT_PROJECT_MAX_BYTES,
      tracer: fastify.tracer
    }),
    ...gitBranches({ db: fastify.db, pushCapabilities, dispatcher, maxResponseBytes, tracer: fastify.tracer })
  }
  const credentials = gitCredentialsStore(fastify.db, fastify.secrets)
  const slots = new ProviderSlots(config.GIT_PROVIDER_CONCURRENCY, config.GIT_PROVIDER_CONCURRENCY_PER_USER)
  const durations = new Histogram({
    name: 'git_operation_duration_seconds',
    help: 'Duration of Git operations (lock wait, fetch, commit and push), by provider, operation and outcome',
    labelNames: ['provider', 'operation', 'outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [fastify.metricsRegistry]
  })

  /**
   * The operation, timed, with the caller's own token for the provider when they stored one, in
   * one of the slots of GIT_PROVIDER_CONCURRENCY (and of the caller's, GIT_PROVIDER_CONCURRENCY_PER_USER).
   */
  function asCaller<T extends GitTarget, R> (name: keyof typeof OPERATIONS, fn: (input: T) => Promise<R>): (input: GitCall<T>) => Promise<R> {
    return async (input) => {
      const end = durations.startTimer({ provider: input.provider.name, operation: OPERATIONS[name] })
      const slot = slots.acquire(input.caller)
      if (!slot.ok) {
        end({ outcome: '503' })
        const scope = slot.refusal === 'user'
          ? 'for this user (GIT_PROVIDER_CONCURRENCY_PER_USER)'
          : 'in this instance (GIT_PROVIDER_CONCURRENCY)'
        throw withDetails(new ProviderBusy(scope), { retryAfter: PROVIDER_BUSY_RETRY_AFTER_S })
      }
      try {
        const { caller, ...rest } = input
        const user = await credentials.get(caller, input.provider)
        const result = await fn({ ...rest, user } as unknown as T)
        end({ outcome: 'ok' })
        return result
      } catch (err) {
        end({ outcome: String((err as { statusCode?: number }).statusCode ?? 500) })
        throw err
      } finally {
        slot.release()
      }
    }
  }
  const bound = <K extends keyof typeof operations>(name: K): (typeof operations)[K] => operations[name]

  const service: GitService = {
    providers,
    provider: (gitType) => findProvider(providers, gitType),
    allowedSpecialPaths: config.gitAllowedSpecialPaths,
    initializeProject: asCaller('initializeProject', bound('initializeProject')),
    updateProject: asCaller('updateProject', bound('updateProject')),
    readProject: asCaller('readProject', bound('readProject')),
    listBranches: asCaller('listBranches', bound('listBranches')),
    createBranch: asCaller('createBranch', bound('createBranch')),
    credentials
  }
  fastify.decorate('git', service)
  fastify.addHook('onClose', async () => { await dispatcher.close() })
}, { name: 'git', dependencies: ['config', 'database', 'metrics', 'secrets'] })
