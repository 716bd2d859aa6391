"use strict";
// Running: one claimed job while its handler runs. It heartbeats at a
// third of the lease with the progress and checkpoint the handler set, and
// turns a heartbeat's cancel or pause request, or a lost lease, into an
// abort of the handler's signal.
Object.defineProperty(exports, "__esModule", { value: true });
exports.Running = exports.CLAIM_FIELDS = void 0;
const errors_js_1 = require("./errors.js");
const reporter_js_1 = require("./reporter.js");
/** The fields of a job a worker claims (the claim's `fields`); `id` and `attempt` always come. */
exports.CLAIM_FIELDS = [
    "kind", "op", "queue", "tenant", "priority", "payload", "metadata", "tags", "max_retries",
    "started_at", "lease_until", "checkpoint", "workflow_id", "stage", "traceparent",
];
class Running {
    cfg;
    job;
    context;
    leaseUntil;
    /** The lease was lost (409): no report of this attempt would be taken. */
    lost = false;
    /** The worker gave the job up at the end of a drain and reported it. */
    abandoned = false;
    controller = new AbortController();
    intervalMs;
    timer;
    beat;
    pending = {};
    done = false;
    constructor(job, cfg) {
        this.cfg = cfg;
        this.job = job;
        const now = Date.now();
        this.leaseUntil = job.lease_until ? Date.parse(job.lease_until) : now + (cfg.leaseSeconds ?? 300) * 1000;
        // The lease's length from the server's own two times, not from this
        // machine's clock: lease_until - started_at.
        let leaseMs = (cfg.leaseSeconds ?? 0) * 1000;
        if (!leaseMs && job.lease_until && job.started_at)
            leaseMs = Date.parse(job.lease_until) - Date.parse(job.started_at);
        if (!(leaseMs > 0))
            leaseMs = 300_000;
        this.intervalMs = Math.max(50, Math.floor(leaseMs / 3));
        this.context = this.makeContext();
    }
    /** Starts the heartbeats. */
    start() {
        this.schedule();
    }
    /** Stops the heartbeats: the handler returned or threw. */
    finish() {
        this.done = true;
        if (this.timer)
            clearTimeout(this.timer);
        this.timer = undefined;
    }
    /** Aborts the handler's signal with reason. */
    interrupt(reason, message) {
        if (!this.controller.signal.aborted)
            this.controller.abort(new errors_js_1.JobInterrupted(reason, message));
    }
    get interruptReason() {
        const r = this.controller.signal.reason;
        return this.controller.signal.aborted && r instanceof errors_js_1.JobInterrupted ? r.reason : undefined;
    }
    /** A checkpoint or progress set and not yet sent. */
    get unsent() {
        return Object.keys(this.pending).length > 0;
    }
    /** Sends a heartbeat, after the one in flight. */
    heartbeat() {
        const prev = this.beat ?? Promise.resolve(undefined);
        const next = prev.catch(() => undefined).then(() => this.send());
        this.beat = next;
        void next.catch(() => undefined).finally(() => {
            if (this.beat === next)
                this.beat = undefined;
        });
        return next;
    }
    schedule() {
        if (this.done)
            return;
        this.timer = setTimeout(() => {
            this.timer = undefined;
            this.heartbeat().then(() => this.schedule(), () => this.schedule());
        }, this.intervalMs);
    }
    async send() {
        const body = { ...this.pending, attempt: this.job.attempt, ...(0, reporter_js_1.queueOf)(this.job.queue) };
        if (this.cfg.leaseSeconds !== undefined)
            body.lease_seconds = this.cfg.leaseSeconds;
        const sent = this.pending;
        this.pending = {};
        const fields = { job_id: this.job.id, kind: this.job.kind, attempt: this.job.attempt };
        try {
            const a = await this.cfg.client.heartbeat(this.job.id, this.cfg.workerID, body);
            this.leaseUntil = Date.parse(a.lease_until);
            if (a.cancel_requested)
                this.interrupt("cancel", `job ${this.job.id} was asked to cancel`);
            else if (a.pause_requested)
                this.interrupt("pause", `job ${this.job.id} was asked to pause`);
            return a;
        }
        catch (err) {
            if (err instanceof errors_js_1.SkiplockError && (err.status === 409 || err.status === 404)) {
                this.lost = true;
                this.cfg.log.warn("lease lost; stopping the job", { ...fields, error: err.message });
                this.interrupt("lease_lost", `job ${this.job.id}: lease lost: ${err.message}`);
            }
            else {
                // What it carried goes with the next one, unless set again since.
                this.pending = { ...sent, ...this.pending };
                this.cfg.log.warn("heartbeat failed", { ...fields, error: err instanceof Error ? err.message : String(err) });
            }
            throw err;
        }
    }
    makeContext() {
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
            progress(percent, message) {
                if (!Number.isInteger(percent) || percent < 0 || percent > 100) {
                    throw new RangeError(`progress: must be an integer from 0 to 100, got ${percent}`);
                }
                self.pending.progress = percent;
                if (message !== undefined)
                    self.pending.progress_message = message;
            },
            saveCheckpoint(value) {
                self.pending.checkpoint = value === undefined ? null : value;
            },
            heartbeat: () => this.heartbeat(),
        };
    }
}
exports.Running = Running;
