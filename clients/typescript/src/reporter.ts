// Reporter: a worker's reports of finished jobs. Completions wait in a
// queue and leave in batches (POST /v1/jobs/complete, or with the next
// claim); failures leave one call each. A report that gets no answer or a
// 503 is sent again after a backoff, so a finished job's report is never
// dropped while its lease lasts.

import { Backoff, sleep, type BackoffOptions } from "./backoff.js";
import type { Client } from "./client.js";
import { SkiplockError } from "./errors.js";
import type { Logger } from "./logger.js";
import type { Completion, CompletionResult, FailRequest } from "./types.js";

/** The most jobs one completion call or claim reports. */
export const MAX_REPORTS = 1000;

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
export function completion(c: PendingCompletion): Completion {
  const out: Completion = { id: c.id, attempt: c.attempt, ...queueOf(c.queue) };
  if (c.result !== undefined) out.result = c.result;
  return out;
}

/** The `queue` field of a report: the job's queue, left out when not known (the server refuses an empty one). */
export function queueOf(queue: string | undefined): { queue?: string } {
  return queue ? { queue } : {};
}

export class Reporter {
  private queue: PendingCompletion[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private flushing = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private finalDrain = false;

  constructor(
    private readonly client: Client,
    private readonly workerID: string,
    private readonly log: Logger,
    private readonly backoffOptions: BackoffOptions | undefined,
    private readonly flushDelayMs: number,
  ) {}

  /** Queues a completion; it leaves with the next claim or within flushDelayMs. */
  complete(c: PendingCompletion): void {
    this.queue.push(c);
    if (!this.timer && !this.flushing) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.track(this.flush());
      }, this.flushDelayMs);
    }
  }

  /** Sends a failure report, again after a backoff while it gets no answer. */
  fail(f: PendingFail): void {
    this.track(this.sendFail(f));
  }

  /** Takes up to max queued completions for a claim to carry. */
  take(max = MAX_REPORTS): PendingCompletion[] {
    return this.queue.splice(0, Math.min(max, this.queue.length));
  }

  /** Puts back completions whose call failed; inDoubt when it may have been stored. */
  putBack(items: PendingCompletion[], inDoubt: boolean): void {
    if (items.length === 0) return;
    for (const c of items) c.inDoubt ||= inDoubt;
    this.queue.unshift(...items);
    if (!this.flushing) this.track(this.flush());
  }

  /** Logs the completions a call refused (a lost lease, a cancelled job). */
  settle(items: PendingCompletion[], results: CompletionResult[] | undefined): void {
    results?.forEach((r, i) => {
      const c = items[i];
      if (r.ok || !c) return;
      const fields = { job_id: c.id, kind: c.kind, attempt: c.attempt, code: r.error?.code, error: r.error?.message };
      if (c.inDoubt) this.log.debug("completion refused after a retry (it was stored before)", fields);
      else this.log.warn("completion refused", fields);
    });
  }

  /**
   * Handles a call of items that the server refused as bad input: a field
   * naming one item (jobs[3].result too large) fails that job and the rest
   * go back; anything else drops them, logged. Answers whether it was such.
   */
  refused(items: PendingCompletion[], err: unknown): boolean {
    if (!(err instanceof SkiplockError) || err.retryable || err.status === 409 || err.status === 404) return false;
    const m = /^(?:jobs|complete)\[(\d+)\]/.exec(err.field ?? "");
    const bad = m ? items[Number(m[1])] : undefined;
    if (!bad) {
      this.log.error("completions refused", { jobs: items.length, code: err.code, field: err.field, error: err.message });
      return true;
    }
    this.log.error("completion refused; failing the job", { job_id: bad.id, kind: bad.kind, field: err.field, error: err.message });
    this.fail({
      id: bad.id,
      attempt: bad.attempt,
      kind: bad.kind,
      leaseUntil: bad.leaseUntil,
      body: { attempt: bad.attempt, ...queueOf(bad.queue), error: { type: err.code, message: err.message }, retryable: false },
    });
    this.putBack(items.filter((c) => c !== bad), false);
    return true;
  }

  /** Reports left to send. */
  get pending(): number {
    return this.queue.length + this.inFlight.size;
  }

  /**
   * Sends what is left: at shutdown, a report is sent again until it
   * leaves or its lease has passed (the job then runs again anyway).
   */
  async drain(): Promise<void> {
    this.finalDrain = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.track(this.flush());
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    const backoff = new Backoff(this.backoffOptions);
    try {
      while (this.queue.length > 0) {
        this.dropExpired();
        const batch = this.take();
        if (batch.length === 0) break;
        try {
          const results = await this.client.completeMany(
            this.workerID,
            batch.map(completion),
          );
          this.settle(batch, results);
          backoff.reset();
        } catch (err) {
          if (err instanceof SkiplockError && err.retryable) {
            for (const c of batch) c.inDoubt = true;
            this.queue.unshift(...batch);
            const wait = backoff.next();
            this.log.warn("completions not sent; sending again", { jobs: batch.length, wait_ms: wait, error: err.message });
            await sleep(wait);
          } else if (!this.refused(batch, err)) {
            this.log.error("completions not sent", { jobs: batch.length, error: String(err) });
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async sendFail(f: PendingFail): Promise<void> {
    const backoff = new Backoff(this.backoffOptions);
    for (let sent = false; ; sent = true) {
      if (this.finalDrain && Date.now() > f.leaseUntil) {
        this.log.error("failure report given up: the lease has passed, the job runs again", { job_id: f.id, kind: f.kind, attempt: f.attempt });
        return;
      }
      try {
        await this.client.fail(f.id, this.workerID, f.body);
        return;
      } catch (err) {
        if (err instanceof SkiplockError && err.retryable) {
          const wait = backoff.next();
          this.log.warn("failure report not sent; sending again", { job_id: f.id, wait_ms: wait, error: err.message });
          await sleep(wait);
          continue;
        }
        const level = sent && err instanceof SkiplockError && err.status === 409 ? "debug" : "warn";
        this.log[level]("failure report refused", { job_id: f.id, kind: f.kind, attempt: f.attempt, error: String(err) });
        return;
      }
    }
  }

  private dropExpired(): void {
    if (!this.finalDrain) return;
    const now = Date.now();
    const keep = this.queue.filter((c) => c.leaseUntil >= now);
    if (keep.length === this.queue.length) return;
    for (const c of this.queue) {
      if (c.leaseUntil < now) {
        this.log.error("completion given up: the lease has passed, the job runs again", { job_id: c.id, kind: c.kind, attempt: c.attempt });
      }
    }
    this.queue = keep;
  }
}
