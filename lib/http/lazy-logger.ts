import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString, Logger } from 'pino'

type Write = (...args: unknown[]) => void
type MakeChild = (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) => Logger

/**
 * A child logger that makes its pino child only when it first writes a line at an enabled level
 * (or is asked for anything only a real logger has). Lines written are the pino child's own.
 */
export class LazyChildLogger {
  readonly #parent: Logger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions | undefined
  readonly #makeChild: MakeChild
  // A level of its own (a route's log level): as for a pino child, only one that differed from
  // the parent's when it was made; otherwise it follows the parent's level as that changes.
  readonly #ownLevel: LevelWithSilentOrString | undefined
  #child: Logger | undefined

  constructor (parent: Logger, bindings: Bindings, options: ChildLoggerOptions | undefined, makeChild: MakeChild) {
    this.#parent = parent
    this.#bindings = bindings
    this.#makeChild = makeChild
    const level = options?.level
    this.#ownLevel = level !== undefined && level !== parent.level ? level : undefined
    this.#options = level !== undefined && this.#ownLevel === undefined ? { ...options, level: undefined } : options
  }

  /** The pino child, made on first use. */
  get logger (): Logger {
    return this.#child ??= this.#makeChild.call(this.#parent, this.#bindings, this.#options)
  }

  get level (): LevelWithSilentOrString { return this.#child?.level ?? this.#ownLevel ?? this.#parent.level }
  set level (level: LevelWithSilentOrString) { this.logger.level = level }

  isLevelEnabled (level: LevelWithSilentOrString): boolean {
    if (this.#child !== undefined) return this.#child.isLevelEnabled(level)
    const own = this.#ownLevel
    if (own === undefined) return this.#parent.isLevelEnabled(level)
    // A level of its own (a route's logLevel) decides, as it will for the child once made.
    const values = this.#parent.levels.values
    const wanted = values[level]
    const threshold = own === 'silent' ? Infinity : values[own]
    return wanted !== undefined && threshold !== undefined && wanted >= threshold
  }

  #write (level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return
    const logger = this.logger
    ;(logger[level] as Write).apply(logger, args)
  }

  fatal (...args: unknown[]): void { this.#write('fatal', args) }
  error (...args: unknown[]): void { this.#write('error', args) }
  warn (...args: unknown[]): void { this.#write('warn', args) }
  info (...args: unknown[]): void { this.#write('info', args) }
  debug (...args: unknown[]): void { this.#write('debug', args) }
  trace (...args: unknown[]): void { this.#write('trace', args) }
  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.logger.child(bindings, options)
  }
}

/**
 * Makes the children of `root` (Fastify's logger: one child per request, bound to its request id)
 * lazy. Below the configured level a request writes no line, yet making its pino child was the
 * largest cost the logger added to the lightest routes. Fastify makes each request's logger with
 * `root.child(...)`; a `childLoggerFactory` option would do the same, but Fastify then checks
 * every logger it returns, which costs as much as the child it saves. The lazy children answer
 * Fastify's logger interface (levels, `level`, `child`, plus `isLevelEnabled` and `logger` for the
 * pino child itself), which is what this service and its plugins call.
 */
export function deferChildLoggers (root: Logger): void {
  const makeChild: MakeChild = root.child
  root.child = function (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) {
    return new LazyChildLogger(this, bindings, options, makeChild) as unknown as Logger
  } as unknown as Logger['child']
}
