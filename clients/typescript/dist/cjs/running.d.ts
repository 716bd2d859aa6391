import type { Client } from "./client.js";
import { type InterruptReason } from "./errors.js";
import type { Logger } from "./logger.js";
import type { HeartbeatAnswer, Job } from "./types.js";
/** The fields of a job a worker claims (the claim's `fields`); `id` and `attempt` always come. */
export declare const CLAIM_FIELDS: readonly ["kind", "op", "queue", "tenant", "priority", "payload", "metadata", "tags", "max_retries", "started_at", "lease_until", "checkpoint", "workflow_id", "stage", "traceparent"];
/** A claimed job as a worker receives it. */
export type ClaimedJob = Pick<Job, "id" | "attempt" | (typeof CLAIM_FIELDS)[number]>;
/** What a handler gets: the job, its signal, and the means to report progress and save a checkpoint. */
export interface JobContext<P = any, C = any> {
    readonly id: number;
    readonly kind: string;
    readonly op: string | null;
    /** This attempt (1 for the first run); reports carry it. */
    readonly attempt: number;
    readonly maxRetries: number;
    readonly queue: string;
    readonly tenant: string;
    readonly priority: number;
    readonly payload: P;
    readonly metadata: unknown;
    readonly tags: string[];
    /** The checkpoint the last attempt saved (null for none): resume from it. */
    readonly checkpoint: C | null;
    readonly workflowId: string | null;
    readonly stage: string | null;
    /** The W3C trace context the job carries, when any. */
    readonly traceparent: string | undefined;
    /** Aborted when the job is asked to cancel or pause, when its lease is lost, or at the end of a shutdown's drain; `signal.reason` is a JobInterrupted saying which. */
    readonly signal: AbortSignal;
    /** When the lease ends unless a heartbeat extends it. */
    readonly leaseUntil: Date;
    /** Sets the progress (0–100) and its message; the next heartbeat sends them. */
    progress(percent: number, message?: string): void;
    /** Saves a checkpoint that the next attempt gets back; the next heartbeat sends it. */
    saveCheckpoint(value: C): void;
    /** Sends a heartbeat now (with any progress and checkpoint set), and answers the server's answer. */
    heartbeat(): Promise<HeartbeatAnswer>;
}
export interface RunningConfig {
    client: Client;
    workerID: string;
    log: Logger;
    /** The lease a heartbeat asks for, in seconds; undefined leaves it to the server. */
    leaseSeconds: number | undefined;
}
export declare class Running {
    private readonly cfg;
    readonly job: ClaimedJob;
    readonly context: JobContext;
    leaseUntil: number;
    /** The lease was lost (409): no report of this attempt would be taken. */
    lost: boolean;
    /** The worker gave the job up at the end of a drain and reported it. */
    abandoned: boolean;
    private readonly controller;
    private readonly intervalMs;
    private timer;
    private beat;
    private pending;
    private done;
    constructor(job: ClaimedJob, cfg: RunningConfig);
    /** Starts the heartbeats. */
    start(): void;
    /** Stops the heartbeats: the handler returned or threw. */
    finish(): void;
    /** Aborts the handler's signal with reason. */
    interrupt(reason: InterruptReason, message: string): void;
    get interruptReason(): InterruptReason | undefined;
    /** A checkpoint or progress set and not yet sent. */
    get unsent(): boolean;
    /** Sends a heartbeat, after the one in flight. */
    heartbeat(): Promise<HeartbeatAnswer>;
    private schedule;
    private send;
    private makeContext;
}
