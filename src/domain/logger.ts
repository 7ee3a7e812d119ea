// The logging the domain needs: pino's shape, so main passes its pino logger and tests a silent one.

export interface LogFn {
  (obj: object, msg?: string, ...args: unknown[]): void
  (msg: string, ...args: unknown[]): void
}

export interface Logger {
  debug: LogFn
  info: LogFn
  warn: LogFn
  error: LogFn
}
