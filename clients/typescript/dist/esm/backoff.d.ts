export interface BackoffOptions {
    /** The first wait's ceiling in milliseconds (default 100). */
    initialMs?: number;
    /** The longest wait in milliseconds (default 10,000). */
    maxMs?: number;
}
export declare class Backoff {
    private readonly initialMs;
    private readonly maxMs;
    private failures;
    constructor(o?: BackoffOptions);
    /** The wait before the next try, growing with each failure. */
    next(): number;
    reset(): void;
}
/** Resolves after ms, or at once when signal aborts. */
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
