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

export const InitializeProjectBody = Type.Object({
  project: Type.Optional(Type.Unsafe<Record<string, unknown>>(FreeFormObject({ description: Project.description }))),
  commitMessage: Type.Optional(Type.String({
    minLength: 1,
    maxLength: MAX_COMMIT_MESSAGE_LENGTH,
    description: 'Commit message. Default: `Initialize project <projectPath>`.'
  }))
}, { additionalProperties: false })
export type InitializeProjectBody = Static<typeof InitializeProjectBody>

export const InitializeProjectResponse = Type.Object({
  message: Type.String({ description: '`Successfully initialized project`' }),
  data: Type.Unsafe<Record<string, unknown>>(Project)
})
