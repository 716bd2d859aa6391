/** An error the API answered ({"error": {"code", "message", "field"}}), or a call that did not get an answer. */
export declare class SkiplockError extends Error {
    /** The API's error code (`invalid_argument`, `not_found`, `conflict`, `unavailable`, …); `connection` or `timeout` when no answer came. */
    readonly code: string;
    /** The input at fault (`priority`, `jobs[3].run_at`, …), when the API named one. */
    readonly field: string | undefined;
    /** The HTTP status; 0 when no answer came. */
    readonly status: number;
    constructor(status: number, code: string, message: string, field?: string, options?: {
        cause?: unknown;
    });
    /** True for answers worth sending again: 503, a gateway's 502/504, or no answer at all. */
    get retryable(): boolean;
}
/** No answer came: the connection failed, or the call timed out (code `timeout`). */
export declare class ConnectionError extends SkiplockError {
    constructor(code: "connection" | "timeout", message: string, options?: {
        cause?: unknown;
    });
}
/** Thrown by a handler: the attempt is reported not retryable and the job ends `failed`, retries left or not. */
export declare class PermanentError extends Error {
    constructor(message: string, options?: {
        cause?: unknown;
    });
}
/**
 * Thrown by a handler: the job runs again after `seconds`. The HTTP API has
 * no snooze of its own, so this fails the attempt as retryable with
 * `retry_in_seconds`: it spends an attempt and adds an entry to the job's
 * errors (type `snooze`).
 */
export declare class SnoozeError extends Error {
    readonly seconds: number;
    constructor(seconds: number, message?: string);
}
/** Makes err a permanent failure: the job ends `failed` without a retry. */
export declare function permanent(err: unknown): PermanentError;
/** A failure that runs the job again after `seconds` (see SnoozeError). */
export declare function snooze(seconds: number, message?: string): SnoozeError;
/** Why a running job's signal was aborted. */
export type InterruptReason = "cancel" | "pause" | "shutdown" | "lease_lost";
/** The reason of a job's aborted AbortSignal. */
export declare class JobInterrupted extends Error {
    readonly reason: InterruptReason;
    constructor(reason: InterruptReason, message: string);
}
