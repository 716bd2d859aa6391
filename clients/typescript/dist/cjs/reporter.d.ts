import { type BackoffOptions } from "./backoff.js";
import type { Client } from "./client.js";
import type { Logger } from "./logger.js";
import type { Completion, CompletionResult, FailRequest } from "./types.js";
/** The most jobs one completion call or claim reports. */
export declare const MAX_REPORTS = 1000;
export interface PendingCompletion {
    id: number;
    attempt: number;
    /** The job's queue as the claim answered it: on Citus, its report goes to that queue's shard. */
    queue: string;
    kind: string;
    result: unknown;
    /** When the job's lease ends (ms since the epoch): after it, a report that still has not left is given up at shutdown. */
    leaseUntil: number;
    /** It left in a call that got no answer: it may be stored, and a refusal then only says so. */
    inDoubt: boolean;
}
export interface PendingFail {
    id: number;
    attempt: number;
    kind: string;
    body: FailRequest;
    leaseUntil: number;
}
/** A completion as a report carries it: with its queue, when the claim answered one. */
export declare function completion(c: PendingCompletion): Completion;
/** The `queue` field of a report: the job's queue, left out when not known (the server refuses an empty one). */
export declare function queueOf(queue: string | undefined): {
    queue?: string;
};
export declare class Reporter {
    private readonly client;
    private readonly workerID;
    private readonly log;
    private readonly backoffOptions;
    private readonly flushDelayMs;
    private queue;
    private readonly inFlight;
    private flushing;
    private timer;
    private finalDrain;
    constructor(client: Client, workerID: string, log: Logger, backoffOptions: BackoffOptions | undefined, flushDelayMs: number);
    /** Queues a completion; it leaves with the next claim or within flushDelayMs. */
    complete(c: PendingCompletion): void;
    /** Sends a failure report, again after a backoff while it gets no answer. */
    fail(f: PendingFail): void;
    /** Takes up to max queued completions for a claim to carry. */
    take(max?: number): PendingCompletion[];
    /** Puts back completions whose call failed; inDoubt when it may have been stored. */
    putBack(items: PendingCompletion[], inDoubt: boolean): void;
    /** Logs the completions a call refused (a lost lease, a cancelled job). */
    settle(items: PendingCompletion[], results: CompletionResult[] | undefined): void;
    /**
     * Handles a call of items that the server refused as bad input: a field
     * naming one item (jobs[3].result too large) fails that job and the rest
     * go back; anything else drops them, logged. Answers whether it was such.
     */
    refused(items: PendingCompletion[], err: unknown): boolean;
    /** Reports left to send. */
    get pending(): number;
    /**
     * Sends what is left: at shutdown, a report is sent again until it
     * leaves or its lease has passed (the job then runs again anyway).
     */
    drain(): Promise<void>;
    private track;
    private flush;
    private sendFail;
    private dropExpired;
}
