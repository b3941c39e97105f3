import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** A logger that says whether a level is written (pino's `isLevelEnabled`). */
type LevelAwareLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

function isLevelAware(logger: FastifyBaseLogger): logger is LevelAwareLogger {
  return typeof (logger as Partial<LevelAwareLogger>).isLevelEnabled === 'function';
}

/**
 * A request's logger (`request.log`) that becomes a pino child only when a line is written at a
 * level the service logs. Fastify builds a child per request by default; pino serialises its
 * bindings (the request id) on creation, which was about 2% of a SOAP lookup's CPU in the
 * bench:soap profile, paid on every request even at LOG_LEVEL=warn, where a lookup writes no line.
 * Lines written through it are the child's own, request id included.
 */
export class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: LevelAwareLogger,
    // Not named `bindings`: that is pino's method on a logger, and a field would hide it.
    private readonly childBindings: Bindings,
  ) {}

  /** The pino child, made on first use. */
  private child_(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.childBindings);
    return this.made;
  }

  private write(level: Level, args: unknown[]): void {
    // The child would inherit the parent's level, so the parent decides until one exists.
    if (this.made === undefined && !this.parent.isLevelEnabled(level)) return;
    const child = this.child_();
    Reflect.apply(child[level], child, args);
  }

  /** Whether a line at `level` would be written, as pino's `isLevelEnabled` says. */
  isLevelEnabled(level: string): boolean {
    const made = this.made;
    return made !== undefined && isLevelAware(made) ? made.isLevelEnabled(level) : this.parent.isLevelEnabled(level);
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.child_().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {
    // pino's `silent` level method writes nothing.
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.child_().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory` (documented as the place to return a custom child logger): a
 * RequestLogger, or the logger's own child when the route asks for its own level or serializers
 * (or the logger cannot say which levels it writes).
 */
export function requestLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (Object.keys(options).length > 0 || !isLevelAware(logger)) return logger.child(bindings, options);
  return new RequestLogger(logger, bindings);
}
