// Fastify gives every request a child logger bound to the request's id, made with pino's child(): about
// 1 µs a request of the 29 µs a cached authenticated GET costs the server (docs/history/issue-27.md,
// seventh session). At LOG_LEVEL=warn or above most requests never log a line, so the child is made at the
// request's first line at an enabled level and not before; a call at a disabled level costs one
// level check. At info and below, Fastify's own "incoming request" line makes it at once, as before.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

class LazyChildLogger {
  #made: Logger | undefined;
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #logger(): Logger {
    this.#made ??= this.#parent.child(this.#bindings, this.#options);
    return this.#made;
  }

  #log(level: Level, args: unknown[]): void {
    if (!(this.#made ?? this.#parent).isLevelEnabled(level)) return;
    (this.#logger()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return (this.#made ?? this.#parent).level;
  }
  set level(level: string) {
    this.#logger().level = level;
  }
  fatal(...args: unknown[]) {
    this.#log('fatal', args);
  }
  error(...args: unknown[]) {
    this.#log('error', args);
  }
  warn(...args: unknown[]) {
    this.#log('warn', args);
  }
  info(...args: unknown[]) {
    this.#log('info', args);
  }
  debug(...args: unknown[]) {
    this.#log('debug', args);
  }
  trace(...args: unknown[]) {
    this.#log('trace', args);
  }
  silent() {}
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options) as unknown as FastifyBaseLogger;
  }
}

/**
 * Fastify's `childLoggerFactory`: a request's logger, made when it first logs. A route with its own
 * log level (none here today) gets its child at once, so that level decides from the start.
 */
export function lazyChildLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  const pino = parent as unknown as Logger;
  if (options.level) return pino.child(bindings, options) as unknown as FastifyBaseLogger;
  return new LazyChildLogger(pino, bindings, options) as unknown as FastifyBaseLogger;
}
