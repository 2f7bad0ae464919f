import fp from 'fastify-plugin'
import { Histogram } from 'prom-client'
import { Agent } from 'undici'
import { findProvider, type GitProvider, type GitProviders } from '../lib/git/providers.js'
import { gitCaches } from './git-cache.js'
import { gitProjects, type InitializeProjectInput, type InitializeProjectResult } from './git-projects.js'

// Git projects (spec 4.2): wires the provider transport (git-transport.ts), the bare caches
// (git-cache.ts), our push (git-push.ts) and the project operations (git-projects.ts) into Fastify.

export interface GitService {
  readonly providers: GitProviders
  /** The provider a `gitType` names, case-insensitively. */
  provider: (gitType: string) => GitProvider | undefined
  /** Writes a new file on a branch in one commit; 409 when the path is taken. */
  initializeProject: (input: InitializeProjectInput) => Promise<InitializeProjectResult>
}

declare module 'fastify' {
  interface FastifyInstance {
    git: GitService
  }
}

/** `fastify.git`: providers, the clone cache under DATA_DIR/git, and the locks around pushes. */
export default fp(async (fastify) => {
  const providers = fastify.config.gitProviders
  const dispatcher = new Agent()
  const projects = gitProjects({ db: fastify.db, caches: gitCaches(fastify.config.DATA_DIR), dispatcher })
  const durations = new Histogram({
    name: 'git_operation_duration_seconds',
    help: 'Duration of Git project initializations (lock wait, fetch, commit and push), by provider and outcome',
    labelNames: ['provider', 'operation', 'outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [fastify.metricsRegistry]
  })
  const service: GitService = {
    providers,
    provider: (gitType) => findProvider(providers, gitType),
    initializeProject: async (input) => {
      const end = durations.startTimer({ provider: input.provider.name, operation: 'initialize_project' })
      try {
        const result = await projects.initializeProject(input)
        end({ outcome: 'ok' })
        return result
      } catch (err) {
        end({ outcome: String((err as { statusCode?: number }).statusCode ?? 500) })
        throw err
      }
    }
  }
  fastify.decorate('git', service)
  fastify.addHook('onClose', async () => { await dispatcher.close() })
}, { name: 'git', dependencies: ['config', 'database', 'metrics'] })
