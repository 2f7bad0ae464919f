import { Type, type Static } from '@sinclair/typebox'
import { MAX_COMMIT_MESSAGE_LENGTH } from '../lib/git/commit.js'
import { FreeFormObject } from './common.js'

// Path parameters arrive URL-encoded; Fastify decodes them, so `netops%2Fautomation` is `netops/automation` here.
export const GitProjectParams = Type.Object({
  gitType: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Git provider, matched case-insensitively: GitHub, GitLab, or a name configured in GIT_PROVIDERS.'
  }),
  repoPath: Type.String({
    description: 'Repository path on the provider, URL-encoded: `netops%2Fautomation` for netops/automation. ' +
      'Segments of letters, digits, `.`, `_` and `-`.'
  }),
  branchName: Type.String({
    description: 'Branch to commit to, URL-encoded (`feature%2Fsite-a`). Created from the default branch when missing. ' +
      'Must be a valid Git branch name.'
  }),
  projectPath: Type.String({
    description: 'Path of the project file in the repository, URL-encoded (`projects%2Fsite-a.json`). ' +
      'Relative, without `.` or `..` segments, not inside `.git`.'
  })
})
export type GitProjectParams = Static<typeof GitProjectParams>

export const Project = Type.Object({}, {
  additionalProperties: true,
  description: 'The project document: any JSON object, written as it is.'
})

/** The project document a client sends: free-form, bounded in depth as every free-form field is. */
const ProjectInput = Type.Unsafe<Record<string, unknown>>(FreeFormObject({ description: Project.description }))
const CommitMessage = (verb: string) => Type.Optional(Type.String({
  minLength: 1,
  maxLength: MAX_COMMIT_MESSAGE_LENGTH,
  description: `Commit message. Default: \`${verb} project <projectPath>\`.`
}))

export const InitializeProjectBody = Type.Object({
  project: Type.Optional(ProjectInput),
  commitMessage: CommitMessage('Initialize')
}, { additionalProperties: false })
export type InitializeProjectBody = Static<typeof InitializeProjectBody>

/** The headers of an answer about one project file: what a later If-Match names. */
const ETagHeader = { ETag: Type.String({ description: 'The file\'s blob id, quoted: send it as If-Match to update only that version.' }) }

export const InitializeProjectResponse = Type.Object({
  message: Type.String({ description: '`Successfully initialized project`' }),
  data: Type.Unsafe<Record<string, unknown>>(Project)
}, { headers: ETagHeader })
export type InitializeProjectResponse = Static<typeof InitializeProjectResponse>

export const GitTypeParams = Type.Pick(GitProjectParams, ['gitType'])

export const GitRepoParams = Type.Pick(GitProjectParams, ['gitType', 'repoPath'])
export type GitRepoParams = Static<typeof GitRepoParams>

export const GitBranchParams = Type.Object({
  gitType: GitProjectParams.properties.gitType,
  repoPath: GitProjectParams.properties.repoPath,
  branchName: Type.String({ description: 'Branch name, URL-encoded (`feature%2Fsite-a`). Must be a valid Git branch name.' })
})
export type GitBranchParams = Static<typeof GitBranchParams>

export const UpdateProjectBody = Type.Object({
  project: ProjectInput,
  commitMessage: CommitMessage('Update')
}, { additionalProperties: false })
export type UpdateProjectBody = Static<typeof UpdateProjectBody>

export const UpdateProjectResponse = Type.Object({
  message: Type.String({ description: '`Successfully updated project`, or `Project unchanged: nothing committed` when the file already held the document' }),
  data: Type.Unsafe<Record<string, unknown>>(Project)
}, { headers: ETagHeader })

/** PUT's optional condition: the ETag of a read. */
export const ProjectIfMatchHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ maxLength: 1024, description: 'The ETag of a read: update only while the file is still that version (409 otherwise).' }))
})

/**
 * A project file as stored on the branch (its bytes, not re-serialised), in the content type its
 * bytes are: JSON (any JSON value: a file written elsewhere need not hold an object), other UTF-8
 * text, or bytes. Each is declared, so a generated client knows all three.
 */
export const ReadProjectResponse = {
  description: 'The project file exactly as stored on the branch (its bytes, not re-serialised): `application/json` when it ' +
    'parses as JSON, else `text/plain; charset=utf-8` when it is UTF-8 text, else `application/octet-stream`.',
  headers: {
    ...ETagHeader,
    'X-Git-Commit': Type.String({ description: 'The commit read: the branch\'s tip as the provider advertised it during this request.' })
  },
  content: {
    'application/json': { schema: Type.Unknown({ description: 'The file\'s JSON, as stored (a project written by this service is an object).' }) },
    'text/plain': { schema: Type.String({ description: 'A file that is UTF-8 text but not JSON (`.gitmodules`...).' }) },
    'application/octet-stream': { schema: Type.String({ format: 'binary', description: 'A file that is not UTF-8 text.' }) }
  }
}

const BranchName = Type.String({ minLength: 1, maxLength: 255, description: 'A valid Git branch name' })

export const BranchList = Type.Object({
  branches: Type.Array(Type.String(), { description: 'Names of the branches, sorted' }),
  defaultBranch: Type.Union([Type.String(), Type.Null()], { description: "The branch the provider's HEAD names; null in an empty repository" })
})
export type BranchList = Static<typeof BranchList>

export const CreateBranchBody = Type.Object({
  originBranch: Type.Optional({ ...BranchName, description: 'Branch whose tip the new branch starts at. Default: the default branch.' })
}, { additionalProperties: false })
export type CreateBranchBody = Static<typeof CreateBranchBody>

/** The platform's form: the new branch in the body. */
export const CreateBranchPlatformBody = Type.Object({
  newBranch: { ...BranchName, description: 'The branch to create' },
  originBranch: Type.Optional({ ...BranchName, description: 'Branch whose tip the new branch starts at. Default: the default branch.' })
}, { additionalProperties: false })
export type CreateBranchPlatformBody = Static<typeof CreateBranchPlatformBody>

export const CreateBranchResponse = Type.Object({
  message: Type.String({ description: '`Successfully created branch: <branchName>`' })
})

export const GitCredentialsParams = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 64 }),
  gitType: GitProjectParams.properties.gitType
})
export type GitCredentialsParams = Static<typeof GitCredentialsParams>

export const GitCredentialsBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'The access token (write-only: never returned)' }),
  username: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[^:\\u0000-\\u001f\\u007f]+$',
    description: 'Username sent with the token (HTTP Basic). Default: `x-access-token` (GitHub; GitLab accepts any).'
  }))
}, { additionalProperties: false })
export type GitCredentialsBody = Static<typeof GitCredentialsBody>

export const GitCredentialsStored = Type.Object({
  username: Type.String(),
  gitType: Type.String({ description: 'The provider, as configured' }),
  stored: Type.Literal(true)
})
