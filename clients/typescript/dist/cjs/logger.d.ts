/** Structured fields of a log line (`job_id`, `kind`, `attempt`, `error`, …). */
export type LogFields = Record<string, unknown>;
/** What the client and the worker log through; `console` fits, and so do pino or winston loggers wrapped to take (message, fields). */
export interface Logger {
    debug(message: string, fields?: LogFields): void;
    info(message: string, fields?: LogFields): void;
    warn(message: string, fields?: LogFields): void;
    error(message: string, fields?: LogFields): void;
}
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
/** A Logger that writes to the console the lines at or above level, with their fields as `key=value`. */
export declare function consoleLogger(level?: LogLevel): Logger;
