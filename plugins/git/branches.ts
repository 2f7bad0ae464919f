// Branches (the platform's Git branch calls): listed from the provider's advertisement, and
// created as one ref update at another branch's tip. Neither needs the repository's cache.
import type { Tracer } from '@opentelemetry/api'
import type { Dispatcher } from 'undici'
import type { Db } from '../database/index.js'
import { BranchExists, BranchNotFound, RepositoryEmpty } from '../../lib/git/errors.js'
import { branchRef } from '../../lib/git/paths.js'
import { packOf } from '../../lib/git/protocol/objects.js'
import { ZERO_OID } from '../../lib/git/protocol/receive-pack.js'
import { lockName, type GitTarget } from './projects.js'
import { pushRef, type PushCapabilities } from './push.js'
import { advertise, openRemote } from './transport.js'

export interface CreateBranchInput extends GitTarget {
  branch: string
  /** Where the branch starts; the default branch when absent. */
  originBranch?: string
}

export interface CreateBranchResult {
  commit: string
  originBranch: string
}

export interface ListBranchesResult {
  branches: string[]
  defaultBranch?: string
}

export interface GitBranches {
  listBranches: (input: GitTarget) => Promise<ListBranchesResult>
  createBranch: (input: CreateBranchInput) => Promise<CreateBranchResult>
}

export function gitBranches (options: { db: Db, pushCapabilities: PushCapabilities, dispatcher: Dispatcher, maxResponseBytes: number, tracer?: Tracer | null }): GitBranches {
  const { db, pushCapabilities, dispatcher } = options
  const remoteOf = (target: GitTarget) =>
    openRemote(dispatcher, { provider: target.provider, repoPath: target.repoPath, maxBytes: options.maxResponseBytes, user: target.user, tracer: options.tracer })

  return {
    async listBranches (input) {
      const { branches, defaultBranch } = await advertise(remoteOf(input))
      return { branches, defaultBranch }
    },

    async createBranch (input) {
      const repo = remoteOf(input)
      const { branch } = input
      return await db.withAdvisoryLock(lockName(input, branch), async () => {
        const advertised = await advertise(repo)
        const origin = input.originBranch ?? advertised.defaultBranch
        if (origin === undefined) throw new RepositoryEmpty(repo.repoPath, branch)
        const commit = advertised.tips.get(branchRef(origin))
        if (commit === undefined) throw new BranchNotFound(origin, repo.repoPath)
        const exists = () => new BranchExists(branch, repo.repoPath)
        if (advertised.tips.has(branchRef(branch))) throw exists()
        // The provider has every object of the origin's tip: the push sends an empty pack. It is
        // refused (false) when the branch exists by now.
        if (!(await pushRef(repo, pushCapabilities, branch, ZERO_OID, commit, async () => packOf([])))) throw exists()
        return { commit, originBranch: origin }
      })
    }
  }
}
