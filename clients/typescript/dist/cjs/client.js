"use strict";
// Client: producers' and operators' calls (enqueue, read, act on jobs,
// workflows, schedules, queues) and the worker protocol's calls, each one
// HTTP request.
Object.defineProperty(exports, "__esModule", { value: true });
exports.Client = exports.DEFAULT_TIMEOUT_MS = void 0;
const http_js_1 = require("./http.js");
const logger_js_1 = require("./logger.js");
/** Default timeout of a call, in milliseconds. */
exports.DEFAULT_TIMEOUT_MS = 30_000;
class Client {
    logger;
    tenant;
    http;
    constructor(options) {
        if (!options || typeof options.url !== "string")
            throw new TypeError("url: is required");
        this.http = new http_js_1.Transport({
            url: options.url,
            token: options.token,
            timeoutMs: options.timeoutMs ?? exports.DEFAULT_TIMEOUT_MS,
            headers: options.headers,
            fetch: options.fetch,
        });
        this.tenant = options.tenant;
        this.logger = options.logger ?? (0, logger_js_1.consoleLogger)(options.logLevel ?? "info");
    }
    /** The server's URL without a trailing slash. */
    get url() {
        return this.http.baseURL;
    }
    // Producers.
    /** Enqueues one job. A duplicate under its idempotency key answers the existing job with `duplicate: true`. */
    async enqueue(kind, payload = {}, options = {}, req) {
        const spec = this.spec({ ...options, kind, payload });
        const a = await this.http.request("POST", "/v1/jobs", { ...req, body: spec });
        return { ...a.job, duplicate: a.duplicate === true };
    }
    /** Enqueues 1 to 10,000 jobs in one call, all or nothing; answers them in order. */
    async enqueueMany(specs, req) {
        const jobs = specs.map((s) => this.spec(s));
        const a = await this.http.request("POST", "/v1/jobs/batch", {
            ...req,
            body: { jobs },
        });
        return a.jobs.map((j) => ({ ...j, duplicate: j.duplicate === true }));
    }
    /** A job, live or archived; a SkiplockError with code `not_found` when there is none. */
    async get(id, req) {
        return (await this.http.request("GET", `/v1/jobs/${jobID(id)}`, req)).job;
    }
    /** One page of jobs, newest first. */
    async list(filter = {}, req) {
        const a = await this.http.request("GET", "/v1/jobs", {
            ...req,
            query: this.listQuery(filter),
        });
        return { jobs: a.jobs, nextCursor: a.next_cursor };
    }
    /** Every job the filter picks, newest first, a page at a time: `for await (const job of client.jobs({state: "failed"}))`. */
    async *jobs(filter = {}, req) {
        let cursor = filter.cursor;
        for (;;) {
            const page = await this.list({ ...filter, cursor }, req);
            yield* page.jobs;
            if (!page.nextCursor)
                return;
            cursor = page.nextCursor;
        }
    }
    /** Cancels a job; a running one keeps running with `cancel_requested` until its worker reports, then ends `cancelled`. */
    cancel(id, req) {
        return this.jobAction(id, "cancel", req);
    }
    /** Returns a failed or cancelled job to pending. */
    retry(id, req) {
        return this.jobAction(id, "retry", req);
    }
    /** Holds a job; a running one is asked to pause and its worker stops it. */
    pause(id, req) {
        return this.jobAction(id, "pause", req);
    }
    /** Releases a paused job. */
    resume(id, req) {
        return this.jobAction(id, "resume", req);
    }
    /** Retries, cancels, deletes, pauses or resumes every job the filter picks (admin); `dryRun` only counts. */
    async bulk(action, filter, options = {}) {
        const { dryRun, ...req } = options;
        return this.http.request("POST", "/v1/jobs/bulk", {
            ...req,
            body: { action, filter, ...(dryRun === undefined ? {} : { dry_run: dryRun }) },
        });
    }
    /** A workflow's jobs, oldest first, and its state. */
    workflow(workflowID, req) {
        return this.http.request("GET", `/v1/workflows/${encodeURIComponent(workflowID)}`, req);
    }
    // Schedules.
    /** The schedules of the client's tenant, or of `tenant`. */
    async schedules(tenant, req) {
        const q = { tenant: tenant ?? this.tenant };
        return (await this.http.request("GET", "/v1/schedules", { ...req, query: q })).schedules;
    }
    /** Adds or replaces the schedule `key`: `kind` is enqueued with `payload` every `every_seconds`. */
    async putSchedule(key, spec, options = {}) {
        const { tenant, ...req } = options;
        const body = { ...spec, next_run_at: time(spec.next_run_at) };
        const a = await this.http.request("PUT", `/v1/schedules/${encodeURIComponent(key)}`, {
            ...req,
            query: { tenant: tenant ?? this.tenant },
            body,
        });
        return a.schedule;
    }
    /** Removes the schedule `key`; the jobs it enqueued stay. */
    async deleteSchedule(key, options = {}) {
        const { tenant, ...req } = options;
        await this.http.request("DELETE", `/v1/schedules/${encodeURIComponent(key)}`, {
            ...req,
            query: { tenant: tenant ?? this.tenant },
        });
    }
    // Queues and the server.
    /** Every queue with its live counts (unscoped tokens). */
    async queues(req) {
        return (await this.http.request("GET", "/v1/queues", req)).queues;
    }
    /** Stops claims from a queue (admin); `create` pauses a queue that has no jobs yet. */
    pauseQueue(name, options = {}) {
        return this.queueAction(name, "pause", options);
    }
    /** Lets claims take a queue's jobs again (admin). */
    resumeQueue(name, options = {}) {
        return this.queueAction(name, "resume", options);
    }
    /** The loaded contracts. */
    kinds(req) {
        return this.http.request("GET", "/v1/kinds", req);
    }
    /** Totals by state and kind, and throughput. */
    stats(req) {
        return this.http.request("GET", "/v1/stats", req);
    }
    /** The server's health; a SkiplockError with status 503 while the database does not answer or refuses writes. */
    health(req) {
        return this.http.request("GET", "/healthz", req);
    }
    // The worker protocol, for callers that run their own loop; Worker uses these.
    /** Claims up to `max` jobs of a queue, waiting up to `wait_seconds` for work; `complete` reports finished jobs in the same call. */
    claim(queue, body, req) {
        const wait = (body.wait_seconds ?? 0) * 1000;
        return this.http.request("POST", `/v1/queues/${encodeURIComponent(queue)}/claim`, {
            ...req,
            timeoutMs: (req?.timeoutMs ?? this.http.timeoutMs) + wait,
            body,
        });
    }
    /** Extends a claimed job's lease and reports progress and a checkpoint; 409 (`conflict`) when the lease is no longer this worker's. */
    heartbeat(id, workerID, body = {}, req) {
        return this.http.request("POST", `/v1/jobs/${jobID(id)}/heartbeat`, {
            ...req,
            body: { worker_id: workerID, ...body },
        });
    }
    /** Completes a claimed job; `next` jobs are inserted in the same transaction. */
    async complete(id, workerID, body = {}, req) {
        const next = body.next?.map((s) => this.spec(s));
        const a = await this.http.request("POST", `/v1/jobs/${jobID(id)}/complete`, {
            ...req,
            body: { worker_id: workerID, ...body, ...(next ? { next } : {}) },
        });
        return { job: a.job, next: a.next ?? [] };
    }
    /** Completes 1 to 1,000 claimed jobs in one call; each is fenced on its attempt and answered in order. */
    async completeMany(workerID, jobs, req) {
        const a = await this.http.request("POST", "/v1/jobs/complete", {
            ...req,
            body: { worker_id: workerID, jobs },
        });
        return a.results;
    }
    /** Fails a claimed job's attempt: retried after the backoff (or `retry_in_seconds`) while retries are left and it is retryable, else failed. */
    async fail(id, workerID, body, req) {
        const a = await this.http.request("POST", `/v1/jobs/${jobID(id)}/fail`, {
            ...req,
            body: { worker_id: workerID, ...body },
        });
        return a.job;
    }
    async jobAction(id, action, req) {
        return (await this.http.request("POST", `/v1/jobs/${jobID(id)}/${action}`, req)).job;
    }
    async queueAction(name, action, options) {
        const { create, ...req } = options;
        const a = await this.http.request("POST", `/v1/queues/${encodeURIComponent(name)}/${action}`, {
            ...req,
            body: create === undefined ? undefined : { create },
        });
        return a.queue;
    }
    spec(s) {
        const out = { ...s, run_at: time(s.run_at) };
        if (out.run_at === undefined)
            delete out.run_at;
        if (s.tenant === undefined && this.tenant !== undefined)
            out.tenant = this.tenant;
        return out;
    }
    listQuery(f) {
        return {
            state: Array.isArray(f.state) ? f.state.join(",") : f.state,
            kind: f.kind,
            queue: f.queue,
            tenant: f.tenant ?? this.tenant,
            workflow_id: f.workflow_id,
            tag: f.tag === undefined ? undefined : [].concat(f.tag),
            metadata: pairs(f.metadata),
            payload: pairs(f.payload),
            worker_id: f.worker_id,
            error_type: f.error_type,
            error_message: f.error_message,
            idempotency_key: f.idempotency_key,
            created_after: time(f.created_after),
            created_before: time(f.created_before),
            finished_after: time(f.finished_after),
            finished_before: time(f.finished_before),
            limit: f.limit,
            cursor: f.cursor || undefined,
        };
    }
}
exports.Client = Client;
/** KEY:VALUE query values, each VALUE as JSON. */
function pairs(m) {
    return m === undefined ? undefined : Object.entries(m).map(([k, v]) => `${k}:${JSON.stringify(v)}`);
}
function time(t) {
    return t instanceof Date ? t.toISOString() : t;
}
function jobID(id) {
    if (!Number.isSafeInteger(id) || id < 1)
        throw new RangeError(`id: must be a positive integer, got ${id}`);
    return String(id);
}
