// Errors of the client and the worker. Every failure of a call is a
// SkiplockError: the API's own errors carry its code, field and status;
// a connection that failed or timed out is a ConnectionError (status 0).
/** An error the API answered ({"error": {"code", "message", "field"}}), or a call that did not get an answer. */
export class SkiplockError extends Error {
    /** The API's error code (`invalid_argument`, `not_found`, `conflict`, `unavailable`, …); `connection` or `timeout` when no answer came. */
    code;
    /** The input at fault (`priority`, `jobs[3].run_at`, …), when the API named one. */
    field;
    /** The HTTP status; 0 when no answer came. */
    status;
    constructor(status, code, message, field, options) {
        super(message, options);
        this.name = "SkiplockError";
        this.status = status;
        this.code = code;
        this.field = field || undefined;
    }
    /** True for answers worth sending again: 503, a gateway's 502/504, or no answer at all. */
    get retryable() {
        return this.status === 0 || this.status === 503 || this.status === 502 || this.status === 504;
    }
}
/** No answer came: the connection failed, or the call timed out (code `timeout`). */
export class ConnectionError extends SkiplockError {
    constructor(code, message, options) {
        super(0, code, message, undefined, options);
        this.name = "ConnectionError";
    }
}
/** Thrown by a handler: the attempt is reported not retryable and the job ends `failed`, retries left or not. */
export class PermanentError extends Error {
    constructor(message, options) {
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
    seconds;
    constructor(seconds, message) {
        super(message ?? `snoozed for ${seconds}s`);
        this.name = "SnoozeError";
        if (!(seconds >= 0) || !Number.isFinite(seconds)) {
            throw new RangeError(`snooze: seconds must be a finite number >= 0, got ${seconds}`);
        }
        this.seconds = seconds;
    }
}
/** Makes err a permanent failure: the job ends `failed` without a retry. */
export function permanent(err) {
    if (err instanceof PermanentError)
        return err;
    const message = err instanceof Error ? err.message : String(err);
    return new PermanentError(message, { cause: err });
}
/** A failure that runs the job again after `seconds` (see SnoozeError). */
export function snooze(seconds, message) {
    return new SnoozeError(seconds, message);
}
/** The reason of a job's aborted AbortSignal. */
export class JobInterrupted extends Error {
    reason;
    constructor(reason, message) {
        super(message);
        this.name = "JobInterrupted";
        this.reason = reason;
    }
}
