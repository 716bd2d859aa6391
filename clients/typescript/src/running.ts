// Running: one claimed job while its handler runs. It heartbeats at a
// third of the lease with the progress and checkpoint the handler set, and
// turns a heartbeat's cancel or pause request, or a lost lease, into an
// abort of the handler's signal.

import type { Client } from "./client.js";
import { JobInterrupted, SkiplockError, type InterruptReason } from "./errors.js";
import type { Logger } from "./logger.js";
import { queueOf } from "./reporter.js";
import type { HeartbeatAnswer, HeartbeatRequest, Job } from "./types.js";

/** The fields of a job a worker claims (the claim's `fields`); `id` and `attempt` always come. */
export const CLAIM_FIELDS = [
  "kind", "op", "queue", "tenant", "priority", "payload", "metadata", "tags", "max_retries",
  "started_at", "lease_until", "checkpoint", "workflow_id", "stage", "traceparent",
] as const;

/** A claimed job as a worker receives it. */
export type ClaimedJob = Pick<Job, "id" | "attempt" | (typeof CLAIM_FIELDS)[number]>;

/** What a handler gets: the job, its signal, and the means to report progress and save a checkpoint. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
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

export class Running {
  readonly job: ClaimedJob;
  readonly context: JobContext;
  leaseUntil: number;
  /** The lease was lost (409): no report of this attempt would be taken. */
  lost = false;
  /** The worker gave the job up at the end of a drain and reported it. */
  abandoned = false;
  private readonly controller = new AbortController();
  private readonly intervalMs: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private beat: Promise<HeartbeatAnswer> | undefined;
  private pending: HeartbeatRequest = {};
  private done = false;

  constructor(job: ClaimedJob, private readonly cfg: RunningConfig) {
    this.job = job;
    const now = Date.now();
    this.leaseUntil = job.lease_until ? Date.parse(job.lease_until) : now + (cfg.leaseSeconds ?? 300) * 1000;
    // The lease's length from the server's own two times, not from this
    // machine's clock: lease_until - started_at.
    let leaseMs = (cfg.leaseSeconds ?? 0) * 1000;
    if (!leaseMs && job.lease_until && job.started_at) leaseMs = Date.parse(job.lease_until) - Date.parse(job.started_at);
    if (!(leaseMs > 0)) leaseMs = 300_000;
    this.intervalMs = Math.max(50, Math.floor(leaseMs / 3));
    this.context = this.makeContext();
  }

  /** Starts the heartbeats. */
  start(): void {
    this.schedule();
  }

  /** Stops the heartbeats: the handler returned or threw. */
  finish(): void {
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Aborts the handler's signal with reason. */
  interrupt(reason: InterruptReason, message: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(new JobInterrupted(reason, message));
  }

  get interruptReason(): InterruptReason | undefined {
    const r = this.controller.signal.reason;
    return this.controller.signal.aborted && r instanceof JobInterrupted ? r.reason : undefined;
  }

  /** A checkpoint or progress set and not yet sent. */
  get unsent(): boolean {
    return Object.keys(this.pending).length > 0;
  }

  /** Sends a heartbeat, after the one in flight. */
  heartbeat(): Promise<HeartbeatAnswer> {
    const prev = this.beat ?? Promise.resolve(undefined);
    const next = prev.catch(() => undefined).then(() => this.send());
    this.beat = next;
    void next.catch(() => undefined).finally(() => {
      if (this.beat === next) this.beat = undefined;
    });
    return next;
  }

  private schedule(): void {
    if (this.done) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.heartbeat().then(
        () => this.schedule(),
        () => this.schedule(),
      );
    }, this.intervalMs);
  }

  private async send(): Promise<HeartbeatAnswer> {
    const body: HeartbeatRequest = { ...this.pending, attempt: this.job.attempt, ...queueOf(this.job.queue) };
    if (this.cfg.leaseSeconds !== undefined) body.lease_seconds = this.cfg.leaseSeconds;
    const sent = this.pending;
    this.pending = {};
    const fields = { job_id: this.job.id, kind: this.job.kind, attempt: this.job.attempt };
    try {
      const a = await this.cfg.client.heartbeat(this.job.id, this.cfg.workerID, body);
      this.leaseUntil = Date.parse(a.lease_until);
      if (a.cancel_requested) this.interrupt("cancel", `job ${this.job.id} was asked to cancel`);
      else if (a.pause_requested) this.interrupt("pause", `job ${this.job.id} was asked to pause`);
      return a;
    } catch (err) {
      if (err instanceof SkiplockError && (err.status === 409 || err.status === 404)) {
        this.lost = true;
        this.cfg.log.warn("lease lost; stopping the job", { ...fields, error: err.message });
        this.interrupt("lease_lost", `job ${this.job.id}: lease lost: ${err.message}`);
      } else {
        // What it carried goes with the next one, unless set again since.
        this.pending = { ...sent, ...this.pending };
        this.cfg.log.warn("heartbeat failed", { ...fields, error: err instanceof Error ? err.message : String(err) });
      }
      throw err;
    }
  }

  private makeContext(): JobContext {
    const j = this.job;
    const self = this;
    return {
      id: j.id,
      kind: j.kind,
      op: j.op ?? null,
      attempt: j.attempt,
      maxRetries: j.max_retries,
      queue: j.queue,
      tenant: j.tenant,
      priority: j.priority,
      payload: j.payload ?? {},
      metadata: j.metadata ?? null,
      tags: j.tags ?? [],
      checkpoint: j.checkpoint ?? null,
      workflowId: j.workflow_id ?? null,
      stage: j.stage ?? null,
      traceparent: j.traceparent,
      signal: this.controller.signal,
      get leaseUntil() {
        return new Date(self.leaseUntil);
      },
      progress(percent: number, message?: string) {
        if (!Number.isInteger(percent) || percent < 0 || percent > 100) {
          throw new RangeError(`progress: must be an integer from 0 to 100, got ${percent}`);
        }
        self.pending.progress = percent;
        if (message !== undefined) self.pending.progress_message = message;
      },
      saveCheckpoint(value: unknown) {
        self.pending.checkpoint = value === undefined ? null : value;
      },
      heartbeat: () => this.heartbeat(),
    };
  }
}
