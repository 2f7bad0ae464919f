// The Git area's errors (docs/errors.md, "Git"): each code once, with its status and message.
// Where a code covers several wordings, the template leaves the differing words to the caller.
import { defineError } from '../http/errors.js'

// Refused input: the reason (from lib/git/paths.ts, commit.ts, etag.ts) starts with the field's name.
export const InvalidRepoPath = defineError<[reason: string]>('GIT_INVALID_REPO_PATH', '%s', 400)
export const InvalidBranchName = defineError<[reason: string]>('GIT_INVALID_BRANCH_NAME', '%s', 400)
export const InvalidProjectPath = defineError<[reason: string]>('GIT_INVALID_PROJECT_PATH', '%s', 400)
export const InvalidCommitMessage = defineError<[reason: string]>('GIT_INVALID_COMMIT_MESSAGE', '%s', 400)
export const InvalidIfMatch = defineError<[reason: string]>('GIT_INVALID_IF_MATCH', '%s', 400)
export const UnknownProvider = defineError<[gitType: string, configured: string]>(
  'GIT_PROVIDER_UNKNOWN', 'Unknown Git provider "%s"; configured: %s', 400)

// Users' own tokens.
export const CredentialsForbidden = defineError(
  'GIT_CREDENTIALS_FORBIDDEN', "Only the user themself or an admin may manage a user's Git credentials", 403)
export const CredentialsNotFound = defineError<[username: string, provider: string]>(
  'GIT_CREDENTIALS_NOT_FOUND', 'User %s has no Git credentials stored for provider %s', 404)
export const CredentialUnreadable = defineError<[username: string, provider: string]>(
  'GIT_CREDENTIAL_UNREADABLE', 'The Git token stored for user %s for provider %s was sealed with a key that neither ' +
    'SECRET_KEY nor SECRET_KEY_PREVIOUS (or their old names ORCHESTRATOR_SECRET_KEY, ORCHESTRATOR_SECRET_KEY_PREVIOUS) opens; ' +
    'give every instance the same SECRET_KEY (the key it replaced in SECRET_KEY_PREVIOUS), or store the token again', 503)

// Repositories, branches and project files.
export const RepositoryNotFound = defineError<[repoPath: string, provider: string]>(
  'GIT_REPOSITORY_NOT_FOUND', 'Repository %s not found on Git provider %s', 404)
export const BranchNotFound = defineError<[branch: string, repoPath: string]>(
  'GIT_BRANCH_NOT_FOUND', 'Branch %s not found in repository %s', 404)
/** `hint`: '' on a read, '; initialize it first (POST)' on an update. */
export const ProjectNotFound = defineError<[project: string, branch: string, repoPath: string, hint: string]>(
  'GIT_PROJECT_NOT_FOUND', 'Project %s not found on branch %s of repository %s%s', 404)
/** `conflict`: what takes the path, as lib/git/tree.ts says it. */
export const ProjectExists = defineError<[conflict: string, branch: string, repoPath: string]>(
  'GIT_PROJECT_EXISTS', '%s on branch %s of repository %s', 409)
export const ProjectChanged = defineError<[project: string, branch: string, repoPath: string, etag: string]>(
  'GIT_PROJECT_CHANGED', 'Project %s on branch %s of repository %s changed since it was read (If-Match); it now has ETag "%s"', 409)
export const BranchExists = defineError<[branch: string, repoPath: string]>(
  'GIT_BRANCH_EXISTS', 'Branch %s already exists in repository %s', 409)
export const RepositoryEmpty = defineError<[repoPath: string, branch: string]>(
  'GIT_REPOSITORY_EMPTY', 'Repository %s has no branch to create %s from (it is empty)', 409)
export const RepositoryApiMissing = defineError<[provider: string]>(
  'GIT_REPOSITORY_API_MISSING', 'Creating a repository needs the REST API of Git provider %s, and none is configured: ' +
    'this service speaks Git to providers, which cannot create repositories. Create it on the provider, then initialize projects in it.', 501)
/** `scope`: 'for this user (GIT_PROVIDER_CONCURRENCY_PER_USER)' or 'in this instance (GIT_PROVIDER_CONCURRENCY)'. */
export const ProviderBusy = defineError<[scope: string]>(
  'GIT_PROVIDER_BUSY', 'Too many calls to Git providers are running %s; retry after the time in Retry-After', 503)
export const BranchBusy = defineError<[branch: string, repoPath: string, attempts: number]>(
  'GIT_BRANCH_BUSY', 'Branch %s of repository %s kept moving during %s pushes; try again', 503)

// The provider.
/**
 * `refusal` is what the provider did ('refused the configured credentials', 'asks for
 * credentials'), `detail` what follows the repository ('(HTTP 401)', 'and none are configured ...').
 */
export const ProviderAuth = defineError<[provider: string, refusal: string, repoPath: string, detail: string]>(
  'GIT_PROVIDER_AUTH', 'Git provider %s %s for repository %s %s', 502)
/** `answer`: 'answered HTTP 500', or 'did not answer as a Git smart HTTP server'. */
export const ProviderError = defineError<[provider: string, answer: string, repoPath: string]>(
  'GIT_PROVIDER_ERROR', 'Git provider %s %s for repository %s', 502)
export const ProviderUnreachable = defineError<[provider: string, reason: string, repoPath: string]>(
  'GIT_PROVIDER_UNREACHABLE', 'Git provider %s is unreachable (%s) for repository %s', 502)
export const ProviderResponseTooLarge = defineError<[provider: string, answer: string, repoPath: string]>(
  'GIT_PROVIDER_RESPONSE_TOO_LARGE', 'Git provider %s sent %s for repository %s (GIT_MAX_RESPONSE_BYTES)', 502)
/** `what`: 'a file of <n> bytes', or how it is stored when that needs more memory than is held ('stored as a change ...'). */
export const ProjectTooLarge = defineError<[project: string, branch: string, repoPath: string, what: string, limit: number]>(
  'GIT_PROJECT_TOO_LARGE', 'Project %s on branch %s of repository %s is %s; the service reads project files of up to %s bytes (GIT_PROJECT_MAX_BYTES)', 502)
/** `reason`: the bound it passed, from lib/git/protocol/pack-index.ts. */
export const ProviderPackTooLarge = defineError<[provider: string, repoPath: string, reason: string]>(
  'GIT_PROVIDER_PACK_TOO_LARGE', 'Git provider %s sent a pack for repository %s that the service does not index: %s', 502)
/** `what`: 'a malformed tree', or 'a path Git refuses (...)'. */
export const ProviderTreeRefused = defineError<[provider: string, what: string, repoPath: string]>(
  'GIT_PROVIDER_TREE_REFUSED', 'Git provider %s holds %s in repository %s; the branch has to be repaired on the provider', 502)
/** `reason`: the provider's, with the messages it sent. */
export const PushRefused = defineError<[provider: string, branch: string, repoPath: string, reason: string]>(
  'GIT_PUSH_REFUSED', 'Git provider %s refused the push to branch %s of repository %s: %s', 502)
export const ProviderTimeout = defineError<[provider: string, timeoutMs: number, repoPath: string]>(
  'GIT_PROVIDER_TIMEOUT', 'Git provider %s did not answer within %s ms for repository %s', 504)
