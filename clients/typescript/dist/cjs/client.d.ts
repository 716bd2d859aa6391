import { type RequestOptions } from "./http.js";
import { type Logger, type LogLevel } from "./logger.js";
import type { BulkAction, BulkFilter, BulkResult, ClaimAnswer, ClaimRequest, CompleteAnswer, CompleteRequest, Completion, CompletionResult, EnqueuedJob, EnqueueOptions, FailRequest, Health, HeartbeatAnswer, HeartbeatRequest, Job, JobPage, JobSpec, Kinds, ListFilter, Queue, Schedule, ScheduleSpec, Stats, Workflow } from "./types.js";
/** Default timeout of a call, in milliseconds. */
export declare const DEFAULT_TIMEOUT_MS = 30000;
export interface ClientOptions {
    /** The server, e.g. `http://127.0.0.1:8080` or `https://jobs.example.com`. */
    url: string;
    /** A token from `skiplock token create`; none for an open loopback server. */
    token?: string;
    /** The tenant enqueues, lists and schedules use when they name none (a tenant-scoped token's tenant wins). */
    tenant?: string;
    /** Timeout of each call in milliseconds (default 30 s); a claim's long poll is added to it. */
    timeoutMs?: number;
    /** Headers sent with every call. */
    headers?: Record<string, string>;
    /** Where the client and its workers log; default the console at `logLevel`. */
    logger?: Logger;
    /** The default logger's level (default `info`). */
    logLevel?: LogLevel;
    /** The fetch to call (default the global fetch). */
    fetch?: typeof fetch;
}
export declare class Client {
    readonly logger: Logger;
    readonly tenant: string | undefined;
    private readonly http;
    constructor(options: ClientOptions);
    /** The server's URL without a trailing slash. */
    get url(): string;
    /** Enqueues one job. A duplicate under its idempotency key answers the existing job with `duplicate: true`. */
    enqueue(kind: string, payload?: Record<string, unknown>, options?: EnqueueOptions, req?: RequestOptions): Promise<EnqueuedJob>;
    /** Enqueues 1 to 10,000 jobs in one call, all or nothing; answers them in order. */
    enqueueMany(specs: JobSpec[], req?: RequestOptions): Promise<EnqueuedJob[]>;
    /** A job, live or archived; a SkiplockError with code `not_found` when there is none. */
    get(id: number, req?: RequestOptions): Promise<Job>;
    /** One page of jobs, newest first. */
    list(filter?: ListFilter, req?: RequestOptions): Promise<JobPage>;
    /** Every job the filter picks, newest first, a page at a time: `for await (const job of client.jobs({state: "failed"}))`. */
    jobs(filter?: ListFilter, req?: RequestOptions): AsyncGenerator<Job, void, undefined>;
    /** Cancels a job; a running one keeps running with `cancel_requested` until its worker reports, then ends `cancelled`. */
    cancel(id: number, req?: RequestOptions): Promise<Job>;
    /** Returns a failed or cancelled job to pending. */
    retry(id: number, req?: RequestOptions): Promise<Job>;
    /** Holds a job; a running one is asked to pause and its worker stops it. */
    pause(id: number, req?: RequestOptions): Promise<Job>;
    /** Releases a paused job. */
    resume(id: number, req?: RequestOptions): Promise<Job>;
    /** Retries, cancels, deletes, pauses or resumes every job the filter picks (admin); `dryRun` only counts. */
    bulk(action: BulkAction, filter: BulkFilter, options?: {
        dryRun?: boolean;
    } & RequestOptions): Promise<BulkResult>;
    /** A workflow's jobs, oldest first, and its state. */
    workflow(workflowID: string, req?: RequestOptions): Promise<Workflow>;
    /** The schedules of the client's tenant, or of `tenant`. */
    schedules(tenant?: string, req?: RequestOptions): Promise<Schedule[]>;
    /** Adds or replaces the schedule `key`: `kind` is enqueued with `payload` every `every_seconds`. */
    putSchedule(key: string, spec: ScheduleSpec, options?: {
        tenant?: string;
    } & RequestOptions): Promise<Schedule>;
    /** Removes the schedule `key`; the jobs it enqueued stay. */
    deleteSchedule(key: string, options?: {
        tenant?: string;
    } & RequestOptions): Promise<void>;
    /** Every queue with its live counts (unscoped tokens). */
    queues(req?: RequestOptions): Promise<Queue[]>;
    /** Stops claims from a queue (admin); `create` pauses a queue that has no jobs yet. */
    pauseQueue(name: string, options?: {
        create?: boolean;
    } & RequestOptions): Promise<Queue>;
    /** Lets claims take a queue's jobs again (admin). */
    resumeQueue(name: string, options?: {
        create?: boolean;
    } & RequestOptions): Promise<Queue>;
    /** The loaded contracts. */
    kinds(req?: RequestOptions): Promise<Kinds>;
    /** Totals by state and kind, and throughput. */
    stats(req?: RequestOptions): Promise<Stats>;
    /** The server's health; a SkiplockError with status 503 while the database does not answer or refuses writes. */
    health(req?: RequestOptions): Promise<Health>;
    /** Claims up to `max` jobs of a queue, waiting up to `wait_seconds` for work; `complete` reports finished jobs in the same call. */
    claim<J = Job>(queue: string, body: ClaimRequest, req?: RequestOptions): Promise<ClaimAnswer<J>>;
    /** Extends a claimed job's lease and reports progress and a checkpoint; 409 (`conflict`) when the lease is no longer this worker's. */
    heartbeat(id: number, workerID: string, body?: HeartbeatRequest, req?: RequestOptions): Promise<HeartbeatAnswer>;
    /** Completes a claimed job; `next` jobs are inserted in the same transaction. */
    complete(id: number, workerID: string, body?: CompleteRequest, req?: RequestOptions): Promise<CompleteAnswer>;
    /** Completes 1 to 1,000 claimed jobs in one call; each is fenced on its attempt and answered in order. */
    completeMany(workerID: string, jobs: Completion[], req?: RequestOptions): Promise<CompletionResult[]>;
    /** Fails a claimed job's attempt: retried after the backoff (or `retry_in_seconds`) while retries are left and it is retryable, else failed. */
    fail(id: number, workerID: string, body: FailRequest, req?: RequestOptions): Promise<Job>;
    private jobAction;
    private queueAction;
    private spec;
    private listQuery;
}
