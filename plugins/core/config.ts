import fp from 'fastify-plugin'
import { envSchema } from 'env-schema'
import { Type, type Static } from '@sinclair/typebox'
import { parseBundleVersion } from '../../lib/configuration/maintenance-version.js'
import { parseGitProviders, type GitProviders } from '../../lib/git/providers.js'
import { parseAllowedSpecialPaths, type SpecialPath } from '../../lib/git/paths.js'
import { tracingSettings, type TracingSettings } from '../../lib/tracing/settings.js'
import { checkKeySettings } from '../../lib/secrets/key-settings.js'
import packageJson from '../../package.json' with { type: 'json' }

// Every setting the service reads, with its default. The only place that reads the environment.
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  DATABASE_QUERY_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 30_000 }),
  ADMIN_USERNAME: Type.String({ minLength: 1, maxLength: 64, default: 'admin' }),
  ADMIN_PASSWORD: Type.Optional(Type.String()),
  AUTH_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 10_000 }),
  LOGIN_FAILURES_MAX: Type.Integer({ minimum: 1, default: 10 }),
  LOGIN_FAILURES_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  LOGIN_ADDRESS_FAILURES_MAX: Type.Integer({ minimum: 1, default: 20 }),
  // Keys of the shared failed-login counts waiting for the next database statement; past it, 503 LOGIN_BUSY.
  LOGIN_SHARED_PENDING_KEYS: Type.Integer({ minimum: 2, maximum: 1_000_000, default: 10_000 }),
  LOGIN_GUARD_MAX_ENTRIES: Type.Integer({ minimum: 100, maximum: 10_000_000, default: 50_000 }),
  PASSWORD_CHECK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  PASSWORD_CHECK_QUEUE: Type.Integer({ minimum: 0, maximum: 10_000, default: 16 }),
  SESSION_TTL_S: Type.Integer({ minimum: 60, maximum: 30 * 24 * 3600, default: 8 * 3600 }),
  TOKEN_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 5000, default: 5000 }),
  OAUTH_TOKEN_TTL_S: Type.Integer({ minimum: 60, maximum: 24 * 3600, default: 3600 }),
  METRICS_AUTH: Type.Boolean({ default: false }),
  LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 1000 }),
  LOAD_SHEDDING_MAX_HEAP_BYTES: Type.Integer({ minimum: 0, default: 0 }),
  LOAD_SHEDDING_RETRY_AFTER_S: Type.Integer({ minimum: 1, default: 10 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' }
  ),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  TRUST_PROXY: Type.Optional(Type.String()),
  BODY_LIMIT: Type.Integer({ minimum: 1024, maximum: 1024 * 1024 * 1024, default: 1024 * 1024 }),
  // Client connections (docs/deploying.md, "Connections"): the whole request (headers and body)
  // and its headers must arrive within these; an idle keep-alive connection closes after the third;
  // an answer whose pending output the client takes none of for the fourth is cut.
  HTTP_REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
  HTTP_HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 72_000 }),
  HTTP_SEND_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
  // Client connections held at once (0: derived from the file-descriptor limit; never above it).
  HTTP_MAX_CONNECTIONS: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0 }),
  CONFIG_MANAGER_BUNDLE_VERSION: Type.String({ minLength: 1, default: packageJson.version }),
  CONFIG_MANAGER_MAINTENANCE: Type.Optional(Type.Boolean()),
  // JSON: {"<name>": {"url", "username"?, "token"?, "timeoutMs"?}}; see lib/git/providers.ts.
  GIT_PROVIDERS: Type.Optional(Type.String()),
  // Comma-separated: .gitmodules, .github, .gitlab-ci.yml (refused as project paths unless named).
  GIT_ALLOWED_SPECIAL_PATHS: Type.Optional(Type.String()),
  // Largest answer read from a Git provider (advertisement, fetched pack, push report).
  GIT_MAX_RESPONSE_BYTES: Type.Integer({ minimum: 65_536, maximum: 4 * 1024 * 1024 * 1024, default: 256 * 1024 * 1024 }),
  // Largest project file read from Git (its size read before it is inflated); past it, 502 GIT_PROJECT_TOO_LARGE.
  GIT_PROJECT_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 32 * 1024 * 1024, default: 8 * 1024 * 1024 }),
  // Git operations talking to providers at once, in the instance and per user; past either, 503.
  GIT_PROVIDER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1024, default: 16 }),
  GIT_PROVIDER_CONCURRENCY_PER_USER: Type.Integer({ minimum: 1, maximum: 1024, default: 8 }),
  // The clone cache under DATA_DIR/git: total size and number of repositories, least recently used evicted.
  GIT_CACHE_MAX_BYTES: Type.Integer({ minimum: 1024 * 1024, default: 2 * 1024 * 1024 * 1024 }),
  GIT_CACHE_MAX_REPOSITORIES: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 256 }),
  // The key that seals stored secrets (lib/secrets/), and the keys that sealed them before it.
  SECRET_KEY: Type.Optional(Type.String({ minLength: 32 })),
  SECRET_KEY_PREVIOUS: Type.Optional(Type.String({ pattern: '^\\s*[^,\\s][^,]{31,}(,\\s*[^,\\s][^,]{31,})*\\s*$' })),
  // The old names of SECRET_KEY and SECRET_KEY_PREVIOUS, still read.
  ORCHESTRATOR_SECRET_KEY: Type.Optional(Type.String({ minLength: 32 })),
  ORCHESTRATOR_SECRET_KEY_PREVIOUS: Type.Optional(Type.String({ pattern: '^\\s*[^,\\s][^,]{31,}(,\\s*[^,\\s][^,]{31,})*\\s*$' })),
  ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 2000 }),
  ORCHESTRATOR_POOL_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 256, default: 10 }),
  ORCHESTRATOR_POOL_IDLE_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 60_000 }),
  // Calls per adapter waiting for a free connection of its pool, and for how long; past either, 503.
  ORCHESTRATOR_QUEUE_MAX: Type.Integer({ minimum: 0, maximum: 100_000, default: 100 }),
  ORCHESTRATOR_QUEUE_WAIT_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 30_000 }),
  // The most bytes of items one list page holds (at least one item): see lib/lists/statements.ts.
  LIST_MAX_PAGE_BYTES: Type.Integer({ minimum: 1024, maximum: 1024 * 1024 * 1024, default: 8 * 1024 * 1024 }),
  STUDIO_IMPORT_MAX_GROUPS: Type.Integer({ minimum: 1, maximum: 10_000, default: 500 }),
  STUDIO_IMPORT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
  // The audit trail (docs/audit.md): off only for a benchmark's baseline; events older than the
  // retention are deleted in small batches (0: kept for ever).
  AUDIT_ENABLED: Type.Boolean({ default: true }),
  AUDIT_RETENTION_DAYS: Type.Integer({ minimum: 0, maximum: 36_500, default: 90 }),
  // A batch of events is written at most this long after its first event (sooner when full).
  AUDIT_FLUSH_INTERVAL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 100 }),
  // Events the audit queue holds while the database cannot take them; writes past it are refused (503).
  AUDIT_QUEUE_MAX: Type.Integer({ minimum: 2, maximum: 1_000_000, default: 20_000 }),
  // Denied requests (401, 403, failed logins) recorded per client address and in total in each
  // window; the others are counted, one request.denied.suppressed event per address and window.
  AUDIT_DENIED_WINDOW_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
  AUDIT_DENIED_PER_ADDRESS: Type.Integer({ minimum: 0, maximum: 10_000, default: 10 }),
  AUDIT_DENIED_MAX: Type.Integer({ minimum: 1, maximum: 100_000, default: 100 }),
  // Component-group history: versions kept per group (0: none recorded) and, when set, the oldest age kept.
  STUDIO_HISTORY_MAX_VERSIONS: Type.Integer({ minimum: 0, maximum: 100_000, default: 100 }),
  STUDIO_HISTORY_MAX_AGE_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 36_500 })),
  // Traces (OpenTelemetry's standard variables): off unless an exporter or endpoint is named; see lib/tracing/settings.ts.
  OTEL_SDK_DISABLED: Type.Boolean({ default: false }),
  OTEL_TRACES_EXPORTER: Type.Optional(Type.String()),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  OTEL_EXPORTER_OTLP_HEADERS: Type.Optional(Type.String()),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: Type.Optional(Type.String()),
  OTEL_SERVICE_NAME: Type.String({ minLength: 1, default: 'netauto-api' })
})

/** The settings, plus what is parsed from them once at start. */
export type Config = Static<typeof ConfigSchema> & {
  /** GIT_PROVIDERS over the default providers, by lower-cased name. */
  readonly gitProviders: GitProviders
  /** GIT_ALLOWED_SPECIAL_PATHS, parsed. */
  readonly gitAllowedSpecialPaths: ReadonlySet<SpecialPath>
  /** Where traces go; undefined when tracing is off (the default). */
  readonly tracing: TracingSettings | undefined
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * Reads and validates the configuration from `env` (and `.env` when `dotenv` is set).
 * Throws a ConfigError whose message names the offending variable.
 */
export function loadConfig (env: NodeJS.ProcessEnv = process.env, options: { dotenv?: boolean } = {}): Config {
  // Empty strings mean "unset" for optional settings, as in most deployment tools.
  const data = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''))
  let config: Static<typeof ConfigSchema>
  try {
    // `env: false`: read `env` as given (not process.env behind it); `.env` fills what it lacks.
    config = envSchema<Static<typeof ConfigSchema>>({ schema: { ...ConfigSchema }, data, env: false, dotenv: options.dotenv ?? false })
  } catch (err) {
    throw new ConfigError(`Invalid configuration: ${(err as Error).message}`)
  }
  if (parseBundleVersion(config.CONFIG_MANAGER_BUNDLE_VERSION) === undefined) {
    throw new ConfigError(
      'Invalid configuration: CONFIG_MANAGER_BUNDLE_VERSION must be YEAR.FEATURE.MAINTENANCE ' +
      `or end with -YEAR.FEATURE.MAINTENANCE (got "${config.CONFIG_MANAGER_BUNDLE_VERSION}")`
    )
  }
  if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not be above HTTP_REQUEST_TIMEOUT_MS ' +
      `(got ${config.HTTP_HEADERS_TIMEOUT_MS} and ${config.HTTP_REQUEST_TIMEOUT_MS})`)
  }
  const gitProviders = parseGitProviders(config.GIT_PROVIDERS)
  if (!gitProviders.ok) throw new ConfigError(`Invalid configuration: ${gitProviders.reason}`)
  const gitAllowedSpecialPaths = parseAllowedSpecialPaths(config.GIT_ALLOWED_SPECIAL_PATHS)
  if (!gitAllowedSpecialPaths.ok) throw new ConfigError(`Invalid configuration: ${gitAllowedSpecialPaths.reason}`)
  const keys = checkKeySettings(config)
  if (!keys.ok) throw new ConfigError(`Invalid configuration: ${keys.reason}`)
  const tracing = tracingSettings(config)
  if (!tracing.ok) throw new ConfigError(`Invalid configuration: ${tracing.reason}`)
  return { ...config, gitProviders: gitProviders.value, gitAllowedSpecialPaths: gitAllowedSpecialPaths.value, tracing: tracing.value }
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

export default fp<{ config: Config }>(async (fastify, opts) => {
  fastify.decorate('config', opts.config)
}, { name: 'config' })
