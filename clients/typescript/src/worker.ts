// Worker: runs the jobs of one queue with handlers registered by kind.
// One loop claims as many jobs as there are free slots (reporting the
// finished ones in the same call), each job runs at once under its own
// heartbeat (running.ts), and reports leave in batches (reporter.ts).

import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { Backoff, sleep, type BackoffOptions } from "./backoff.js";
import { Client, type ClientOptions } from "./client.js";
import { JobInterrupted, PermanentError, SkiplockError, SnoozeError } from "./errors.js";
import type { Logger } from "./logger.js";
import { MAX_REPORTS, Reporter, completion, queueOf } from "./reporter.js";
import { CLAIM_FIELDS, Running, type ClaimedJob, type JobContext } from "./running.js";
import type { FailRequest } from "./types.js";

/** Runs one job: its return value is the job's result (JSON); a throw fails the attempt. P is the payload's type, C the checkpoint's. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Handler<P = any, C = any> = (job: JobContext<P, C>) => unknown;

export const DEFAULT_CONCURRENCY = 10;
export const DEFAULT_WAIT_SECONDS = 10;
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

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

export class Worker {
  readonly client: Client;
  readonly queue: string;
  readonly workerId: string;
  private readonly handlers = new Map<string, Handler>();
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly waitSeconds: number;
  private readonly leaseSeconds: number | undefined;
  private readonly drainTimeoutMs: number;
  private readonly backoffOptions: BackoffOptions | undefined;
  private readonly log: Logger;
  private readonly reporter: Reporter;
  private readonly running = new Set<Running>();
  private readonly stopping = new AbortController();
  private readonly drainNow = new AbortController();
  private claimAbort: AbortController | undefined;
  private wake: (() => void) | undefined;
  private runPromise: Promise<void> | undefined;
  private fatal: unknown;

  constructor(options: WorkerOptions) {
    this.client = options.client ?? new Client(options as ClientOptions);
    this.log = options.logger ?? this.client.logger;
    this.queue = options.queue ?? "default";
    this.concurrency = positiveInt("concurrency", options.concurrency ?? DEFAULT_CONCURRENCY);
    this.batchSize = Math.min(positiveInt("batchSize", options.batchSize ?? this.concurrency), MAX_REPORTS);
    this.waitSeconds = options.waitSeconds ?? DEFAULT_WAIT_SECONDS;
    if (!(this.waitSeconds >= 0 && this.waitSeconds <= 60)) throw new RangeError(`waitSeconds: must be from 0 to 60, got ${this.waitSeconds}`);
    this.leaseSeconds = options.leaseSeconds;
    if (this.leaseSeconds !== undefined && !(this.leaseSeconds >= 1)) throw new RangeError(`leaseSeconds: must be at least 1, got ${this.leaseSeconds}`);
    this.drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    if (!(this.drainTimeoutMs >= 0)) throw new RangeError(`drainTimeoutMs: must be >= 0, got ${this.drainTimeoutMs}`);
    this.backoffOptions = options.backoff;
    new Backoff(options.backoff); // checks the options now rather than at the first outage
    this.workerId = options.workerId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
    this.reporter = new Reporter(this.client, this.workerId, this.log, this.backoffOptions, options.flushDelayMs ?? 5);
    for (const [kind, h] of Object.entries(options.handlers ?? {})) this.register(kind, h);
  }

  /** Registers the handler of a kind; before run. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  register<P = any, C = any>(kind: string, handler: Handler<P, C>): this {
    if (this.runPromise) throw new Error(`register ${kind}: the worker is already running`);
    if (typeof handler !== "function") throw new TypeError(`register ${kind}: handler must be a function`);
    this.handlers.set(kind, handler as Handler);
    return this;
  }

  /** Jobs running now. */
  get active(): number {
    return this.running.size;
  }

  /**
   * Runs until stopped (stop(), the signal, or a process signal), then
   * drains; resolves when every report left, rejects when the server
   * refused the claims for good (a bad token, a bad option).
   */
  run(options: RunOptions = {}): Promise<void> {
    if (this.runPromise) return this.runPromise;
    if (this.handlers.size === 0) return Promise.reject(new Error("run: no handler registered"));
    const stopOn = options.stopOn ?? ["SIGTERM", "SIGINT"];
    const onSignal = (sig: NodeJS.Signals) => {
      if (this.stopping.signal.aborted) {
        this.log.warn("second signal: ending the drain now", { signal: sig });
        this.drainNow.abort();
      } else {
        this.log.info("signal: stopping", { signal: sig });
      }
      this.stop();
    };
    for (const s of stopOn) process.on(s, onSignal);
    const onAbort = () => this.stop();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) this.stop();
    this.runPromise = this.loop().finally(() => {
      for (const s of stopOn) process.off(s, onSignal);
      options.signal?.removeEventListener("abort", onAbort);
    });
    return this.runPromise;
  }

  /** Stops claiming and drains (see run); resolves when run does. */
  async stop(): Promise<void> {
    if (!this.stopping.signal.aborted) {
      this.stopping.abort();
      // A claim still waiting is cut: the server hands its jobs back unspent.
      this.claimAbort?.abort();
      this.wake?.();
    }
    if (this.runPromise) await this.runPromise.catch(() => undefined);
  }

  // Shutdown order, in loop(): (1) no claim starts and the one waiting is
  // cut; (2) running jobs finish, until drainTimeoutMs; (3) the ones still
  // running are aborted (reason shutdown) and failed retryable with
  // retry_in_seconds 0, pending again at once (an attempt spent); (4) every
  // report left is sent, again after each 503 or network error, until it
  // leaves or its lease has passed.
  private async loop(): Promise<void> {
    this.log.info("worker started", { worker_id: this.workerId, queue: this.queue, kinds: [...this.handlers.keys()], concurrency: this.concurrency });
    await this.claimLoop();
    await this.drain();
    await this.reporter.drain();
    this.log.info("worker stopped", { worker_id: this.workerId });
    if (this.fatal) throw this.fatal;
  }

  private async claimLoop(): Promise<void> {
    const backoff = new Backoff(this.backoffOptions);
    const kinds = [...this.handlers.keys()];
    while (!this.stopping.signal.aborted) {
      await this.slotFree();
      // Jobs that finish in this turn go with this claim.
      await new Promise((r) => setImmediate(r));
      if (this.stopping.signal.aborted) break;
      const max = Math.min(this.concurrency - this.running.size, this.batchSize);
      if (max <= 0) continue;
      const reports = this.reporter.take();
      const ac = new AbortController();
      this.claimAbort = ac;
      try {
        const a = await this.client.claim<ClaimedJob>(
          this.queue,
          {
            worker_id: this.workerId,
            max,
            wait_seconds: this.waitSeconds,
            kinds,
            fields: [...CLAIM_FIELDS],
            ...(this.leaseSeconds !== undefined ? { lease_seconds: this.leaseSeconds } : {}),
            ...(reports.length > 0 ? { complete: reports.map(completion) } : {}),
          },
          { signal: ac.signal },
        );
        backoff.reset();
        this.reporter.settle(reports, a.completed);
        for (const job of a.jobs) this.start(job);
      } catch (err) {
        if (!(err instanceof SkiplockError)) {
          // The claim was cut by stop() (or failed in a way no answer
          // explains): its reports may be stored or not.
          this.reporter.putBack(reports, true);
          if (this.stopping.signal.aborted) break;
          this.fatal = err;
          this.log.error("claim failed; stopping", { queue: this.queue, error: String(err) });
          this.stopping.abort();
          break;
        }
        if (err.retryable) {
          this.reporter.putBack(reports, true);
          const wait = backoff.next();
          this.log.warn("claim failed; trying again", { queue: this.queue, wait_ms: wait, error: err.message });
          await sleep(wait, this.stopping.signal);
        } else if (reports.length > 0 && /^complete\[/.test(err.field ?? "")) {
          this.reporter.refused(reports, err);
        } else {
          this.reporter.putBack(reports, false);
          this.fatal = err;
          this.log.error("claim refused; stopping", { queue: this.queue, code: err.code, field: err.field, error: err.message });
          this.stopping.abort();
        }
      } finally {
        this.claimAbort = undefined;
      }
    }
  }

  /** Resolves when a slot is free or the worker stops. */
  private slotFree(): Promise<void> {
    if (this.running.size < this.concurrency || this.stopping.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        resolve();
      };
    });
  }

  private start(job: ClaimedJob): void {
    const handler = this.handlers.get(job.kind);
    const r = new Running(job, { client: this.client, workerID: this.workerId, log: this.log, leaseSeconds: this.leaseSeconds });
    this.running.add(r);
    r.start();
    let out: Promise<unknown>;
    try {
      if (!handler) throw new PermanentError(`no handler for kind ${JSON.stringify(job.kind)}`);
      out = Promise.resolve(handler(r.context));
    } catch (err) {
      out = Promise.reject(err);
    }
    out
      .then(
        (result) => this.finished(r, { result }),
        (err) => this.finished(r, { err }),
      )
      .catch((err) => this.log.error("reporting a job failed", { job_id: job.id, kind: job.kind, error: String(err) }));
  }

  private async finished(r: Running, o: { result?: unknown; err?: unknown }): Promise<void> {
    r.finish();
    const job = r.job;
    const fields = { job_id: job.id, kind: job.kind, attempt: job.attempt };
    try {
      if (r.abandoned) return; // reported at the end of the drain
      if (r.lost) {
        this.log.warn("job finished after its lease was lost; not reported", fields);
        return;
      }
      if (!("err" in o)) {
        this.log.debug("job completed", fields);
        this.reporter.complete({ id: job.id, attempt: job.attempt, queue: job.queue, kind: job.kind, result: o.result, leaseUntil: r.leaseUntil, inDoubt: false });
        return;
      }
      if (r.unsent) {
        // A checkpoint saved on the way out goes before the failure, so that a pause or a retry resumes from it.
        await r.heartbeat().catch(() => undefined);
      }
      const body = failure(o.err, r);
      const log = body.error?.type === "cancel" || body.error?.type === "pause" ? this.log.info : this.log.warn;
      log.call(this.log, "job failed", { ...fields, type: body.error?.type, retryable: body.retryable, error: body.error?.message });
      this.reporter.fail({ id: job.id, attempt: job.attempt, kind: job.kind, body, leaseUntil: r.leaseUntil });
    } finally {
      this.running.delete(r);
      this.wake?.();
      this.drained?.();
    }
  }

  private drained: (() => void) | undefined;

  private async drain(): Promise<void> {
    if (this.running.size > 0) {
      this.log.info("draining", { running: this.running.size, timeout_ms: this.drainTimeoutMs });
      const deadline = AbortSignal.timeout(this.drainTimeoutMs);
      while (this.running.size > 0 && !deadline.aborted && !this.drainNow.signal.aborted) {
        await new Promise<void>((resolve) => {
          const done = () => {
            deadline.removeEventListener("abort", done);
            this.drainNow.signal.removeEventListener("abort", done);
            this.drained = undefined;
            resolve();
          };
          this.drained = done;
          deadline.addEventListener("abort", done);
          this.drainNow.signal.addEventListener("abort", done);
        });
      }
    }
    for (const r of this.running) {
      r.abandoned = true;
      r.finish();
      r.interrupt("shutdown", "the worker shut down before the job finished");
      if (r.lost) continue;
      this.log.warn("job given up at shutdown; it is pending again", { job_id: r.job.id, kind: r.job.kind, attempt: r.job.attempt });
      this.reporter.fail({
        id: r.job.id,
        attempt: r.job.attempt,
        kind: r.job.kind,
        leaseUntil: r.leaseUntil,
        body: { attempt: r.job.attempt, ...queueOf(r.job.queue), error: { type: "shutdown", message: "the worker shut down before the job finished" }, retryable: true, retry_in_seconds: 0 },
      });
    }
  }
}


/** The failure report of a handler's throw. */
function failure(err: unknown, r: Running): FailRequest {
  // Every report names the claimed attempt, and the queue that names the job's shard on Citus.
  const held = { attempt: r.job.attempt, ...queueOf(r.job.queue) };
  const reason = r.interruptReason;
  if (reason === "cancel" || reason === "pause") {
    // Any failure report ends a job asked to cancel cancelled, and one asked to pause paused, its attempt unspent.
    return { ...held, error: { type: reason, message: messageOf(err) }, retryable: reason === "pause" };
  }
  if (err instanceof SnoozeError) {
    return { ...held, error: { type: "snooze", message: err.message }, retryable: true, retry_in_seconds: err.seconds };
  }
  if (err instanceof PermanentError) {
    return { ...held, error: { type: typeOf(err.cause) ?? "permanent", message: err.message }, retryable: false };
  }
  if (err instanceof JobInterrupted) {
    return { ...held, error: { type: err.reason, message: err.message }, retryable: true };
  }
  return { ...held, error: { type: typeOf(err) ?? "error", message: messageOf(err) }, retryable: true };
}

function typeOf(err: unknown): string | undefined {
  return err instanceof Error ? err.name : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function positiveInt(name: string, v: number): number {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name}: must be a positive integer, got ${v}`);
  return v;
}
