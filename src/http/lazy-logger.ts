// A request's logger, made when the request first logs: fastify gives every request a pino child
// bound to its id, which costs an object and a serialization of the bindings per request, and on
// the hot path a request never logs (bench/RESULTS.md, HTTP).

import type { FastifyBaseLogger } from 'fastify'

type Bindings = Parameters<FastifyBaseLogger['child']>[0]
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1]
type Log = (...args: unknown[]) => void

class LazyChild {
  private made: FastifyBaseLogger | undefined

  constructor (private readonly parent: FastifyBaseLogger, private readonly bindings: Bindings, private readonly options: ChildOptions) {}

  private get logger (): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options)
    return this.made
  }

  get level (): string {
    return this.made?.level ?? this.parent.level
  }

  set level (level: string) {
    this.logger.level = level
  }

  fatal (...args: unknown[]): void { (this.logger.fatal as Log)(...args) }
  error (...args: unknown[]): void { (this.logger.error as Log)(...args) }
  warn (...args: unknown[]): void { (this.logger.warn as Log)(...args) }
  info (...args: unknown[]): void { (this.logger.info as Log)(...args) }
  debug (...args: unknown[]): void { (this.logger.debug as Log)(...args) }
  trace (...args: unknown[]): void { (this.logger.trace as Log)(...args) }
  silent (...args: unknown[]): void { (this.logger.silent as Log)(...args) }

  child (bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options)
  }
}

/** Fastify's `childLoggerFactory`: the child of each request, made lazily. */
export function lazyChildLogger (parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new LazyChild(parent, bindings, options) as unknown as FastifyBaseLogger
}
