import { type BackoffOptions } from "./backoff.js";
import { Client, type ClientOptions } from "./client.js";
import { type JobContext } from "./running.js";
/** Runs one job: its return value is the job's result (JSON); a throw fails the attempt. P is the payload's type, C the checkpoint's. */
export type Handler<P = any, C = any> = (job: JobContext<P, C>) => unknown;
export declare const DEFAULT_CONCURRENCY = 10;
export declare const DEFAULT_WAIT_SECONDS = 10;
export declare const DEFAULT_DRAIN_TIMEOUT_MS = 30000;
export interface WorkerOptions extends Partial<ClientOptions> {
    /** The client to call through; else one is made from url, token and the other client options. */
    client?: Client;
    /** The queue to work (default `default`). */
    queue?: string;
    /** Handlers by kind; the worker claims only these kinds. */
    handlers?: Record<string, Handler>;
    /** Jobs run at once (default 10). */
    concurrency?: number;
    /** The most jobs one claim takes (default: concurrency, at most 1,000). */
    batchSize?: number;
    /** How long a claim waits for work when there is none (long poll; default 10 s, at most 60). */
    waitSeconds?: number;
    /** The lease a claim and a heartbeat ask for; default the kind's lease on the server (5 min unless its contract says). */
    leaseSeconds?: number;
    /** Names this process to the server (default host-pid-random). */
    workerId?: string;
    /** How long a shutdown waits for running jobs before it gives them up (default 30 s). */
    drainTimeoutMs?: number;
    /** Waits between calls that got no answer or a 503. */
    backoff?: BackoffOptions;
    /** How long a finished job's completion may wait for a claim to carry it (default 5 ms). */
    flushDelayMs?: number;
}
export interface RunOptions {
    /** Stops the worker (gracefully) when it aborts. */
    signal?: AbortSignal;
    /** Process signals that stop the worker gracefully (default SIGTERM and SIGINT; [] for none). A second one ends the drain at once. */
    stopOn?: NodeJS.Signals[];
}
export declare class Worker {
    readonly client: Client;
    readonly queue: string;
    readonly workerId: string;
    private readonly handlers;
    private readonly concurrency;
    private readonly batchSize;
    private readonly waitSeconds;
    private readonly leaseSeconds;
    private readonly drainTimeoutMs;
    private readonly backoffOptions;
    private readonly log;
    private readonly reporter;
    private readonly running;
    private readonly stopping;
    private readonly drainNow;
    private claimAbort;
    private wake;
    private runPromise;
    private fatal;
    constructor(options: WorkerOptions);
    /** Registers the handler of a kind; before run. */
    register<P = any, C = any>(kind: string, handler: Handler<P, C>): this;
    /** Jobs running now. */
    get active(): number;
    /**
     * Runs until stopped (stop(), the signal, or a process signal), then
     * drains; resolves when every report left, rejects when the server
     * refused the claims for good (a bad token, a bad option).
     */
    run(options?: RunOptions): Promise<void>;
    /** Stops claiming and drains (see run); resolves when run does. */
    stop(): Promise<void>;
    private loop;
    private claimLoop;
    /** Resolves when a slot is free or the worker stops. */
    private slotFree;
    private start;
    private finished;
    private drained;
    private drain;
}
