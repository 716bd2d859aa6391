// Errors of the client and the worker. Every failure of a call is a
// SkiplockError: the API's own errors carry its code, field and status;
// a connection that failed or timed out is a ConnectionError (status 0).

/** An error the API answered ({"error": {"code", "message", "field"}}), or a call that did not get an answer. */
export class SkiplockError extends Error {
  /** The API's error code (`invalid_argument`, `not_found`, `conflict`, `unavailable`, …); `connection` or `timeout` when no answer came. */
  readonly code: string;
  /** The input at fault (`priority`, `jobs[3].run_at`, …), when the API named one. */
  readonly field: string | undefined;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;

  constructor(status: number, code: string, message: string, field?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SkiplockError";
    this.status = status;
    this.code = code;
    this.field = field || undefined;
  }

  /** True for answers worth sending again: 503, a gateway's 502/504, or no answer at all. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 503 || this.status === 502 || this.status === 504;
  }
}

/** No answer came: the connection failed, or the call timed out (code `timeout`). */
export class ConnectionError extends SkiplockError {
  constructor(code: "connection" | "timeout", message: string, options?: { cause?: unknown }) {
    super(0, code, message, undefined, options);
    this.name = "ConnectionError";
  }
}

/** Thrown by a handler: the attempt is reported not retryable and the job ends `failed`, retries left or not. */
export class PermanentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PermanentError";
  }
}

/**
 * Thrown by a handler: the job runs again after `seconds`. The HTTP API has
 * no snooze of its own, so this fails the attempt as retryable with
 * `retry_in_seconds`: it spends an attempt and adds an entry to the job's
 * errors (type `snooze`).
 */
export class SnoozeError extends Error {
  readonly seconds: number;
  constructor(seconds: number, message?: string) {
    super(message ?? `snoozed for ${seconds}s`);
    this.name = "SnoozeError";
    if (!(seconds >= 0) || !Number.isFinite(seconds)) {
      throw new RangeError(`snooze: seconds must be a finite number >= 0, got ${seconds}`);
    }
    this.seconds = seconds;
  }
}

/** Makes err a permanent failure: the job ends `failed` without a retry. */
export function permanent(err: unknown): PermanentError {
  if (err instanceof PermanentError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new PermanentError(message, { cause: err });
}

/** A failure that runs the job again after `seconds` (see SnoozeError). */
export function snooze(seconds: number, message?: string): SnoozeError {
  return new SnoozeError(seconds, message);
}

/** Why a running job's signal was aborted. */
export type InterruptReason = "cancel" | "pause" | "shutdown" | "lease_lost";

/** The reason of a job's aborted AbortSignal. */
export class JobInterrupted extends Error {
  readonly reason: InterruptReason;
  constructor(reason: InterruptReason, message: string) {
    super(message);
    this.name = "JobInterrupted";
    this.reason = reason;
  }
}
