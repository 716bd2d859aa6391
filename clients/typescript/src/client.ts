// Client: producers' and operators' calls (enqueue, read, act on jobs,
// workflows, schedules, queues) and the worker protocol's calls, each one
// HTTP request.

import { Transport, type RequestOptions } from "./http.js";
import { consoleLogger, type Logger, type LogLevel } from "./logger.js";
import type {
  BulkAction,
  BulkFilter,
  BulkResult,
  ClaimAnswer,
  ClaimRequest,
  CompleteAnswer,
  CompleteRequest,
  Completion,
  CompletionResult,
  EnqueuedJob,
  EnqueueOptions,
  FailRequest,
  Health,
  HeartbeatAnswer,
  HeartbeatRequest,
  Job,
  JobPage,
  JobSpec,
  Kinds,
  ListFilter,
  Queue,
  Schedule,
  ScheduleSpec,
  Stats,
  Workflow,
} from "./types.js";

/** Default timeout of a call, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

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

export class Client {
  readonly logger: Logger;
  readonly tenant: string | undefined;
  private readonly http: Transport;

  constructor(options: ClientOptions) {
    if (!options || typeof options.url !== "string") throw new TypeError("url: is required");
    this.http = new Transport({
      url: options.url,
      token: options.token,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      headers: options.headers,
      fetch: options.fetch,
    });
    this.tenant = options.tenant;
    this.logger = options.logger ?? consoleLogger(options.logLevel ?? "info");
  }

  /** The server's URL without a trailing slash. */
  get url(): string {
    return this.http.baseURL;
  }

  // Producers.

  /** Enqueues one job. A duplicate under its idempotency key answers the existing job with `duplicate: true`. */
  async enqueue(kind: string, payload: Record<string, unknown> = {}, options: EnqueueOptions = {}, req?: RequestOptions): Promise<EnqueuedJob> {
    const spec = this.spec({ ...options, kind, payload });
    const a = await this.http.request<{ job: Job; duplicate?: boolean }>("POST", "/v1/jobs", { ...req, body: spec });
    return { ...a.job, duplicate: a.duplicate === true };
  }

  /** Enqueues 1 to 10,000 jobs in one call, all or nothing; answers them in order. */
  async enqueueMany(specs: JobSpec[], req?: RequestOptions): Promise<EnqueuedJob[]> {
    const jobs = specs.map((s) => this.spec(s));
    const a = await this.http.request<{ jobs: Array<Job & { duplicate?: boolean }> }>("POST", "/v1/jobs/batch", {
      ...req,
      body: { jobs },
    });
    return a.jobs.map((j) => ({ ...j, duplicate: j.duplicate === true }));
  }

  /** A job, live or archived; a SkiplockError with code `not_found` when there is none. */
  async get(id: number, req?: RequestOptions): Promise<Job> {
    return (await this.http.request<{ job: Job }>("GET", `/v1/jobs/${jobID(id)}`, req)).job;
  }

  /** One page of jobs, newest first. */
  async list(filter: ListFilter = {}, req?: RequestOptions): Promise<JobPage> {
    const a = await this.http.request<{ jobs: Job[]; next_cursor: string }>("GET", "/v1/jobs", {
      ...req,
      query: this.listQuery(filter),
    });
    return { jobs: a.jobs, nextCursor: a.next_cursor };
  }

  /** Every job the filter picks, newest first, a page at a time: `for await (const job of client.jobs({state: "failed"}))`. */
  async *jobs(filter: ListFilter = {}, req?: RequestOptions): AsyncGenerator<Job, void, undefined> {
    let cursor = filter.cursor;
    for (;;) {
      const page = await this.list({ ...filter, cursor }, req);
      yield* page.jobs;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  /** Cancels a job; a running one keeps running with `cancel_requested` until its worker reports, then ends `cancelled`. */
  cancel(id: number, req?: RequestOptions): Promise<Job> {
    return this.jobAction(id, "cancel", req);
  }

  /** Returns a failed or cancelled job to pending. */
  retry(id: number, req?: RequestOptions): Promise<Job> {
    return this.jobAction(id, "retry", req);
  }

  /** Holds a job; a running one is asked to pause and its worker stops it. */
  pause(id: number, req?: RequestOptions): Promise<Job> {
    return this.jobAction(id, "pause", req);
  }

  /** Releases a paused job. */
  resume(id: number, req?: RequestOptions): Promise<Job> {
    return this.jobAction(id, "resume", req);
  }

  /** Retries, cancels, deletes, pauses or resumes every job the filter picks (admin); `dryRun` only counts. */
  async bulk(action: BulkAction, filter: BulkFilter, options: { dryRun?: boolean } & RequestOptions = {}): Promise<BulkResult> {
    const { dryRun, ...req } = options;
    return this.http.request<BulkResult>("POST", "/v1/jobs/bulk", {
      ...req,
      body: { action, filter, ...(dryRun === undefined ? {} : { dry_run: dryRun }) },
    });
  }

  /** A workflow's jobs, oldest first, and its state. */
  workflow(workflowID: string, req?: RequestOptions): Promise<Workflow> {
    return this.http.request<Workflow>("GET", `/v1/workflows/${encodeURIComponent(workflowID)}`, req);
  }

  // Schedules.

  /** The schedules of the client's tenant, or of `tenant`. */
  async schedules(tenant?: string, req?: RequestOptions): Promise<Schedule[]> {
    const q = { tenant: tenant ?? this.tenant };
    return (await this.http.request<{ schedules: Schedule[] }>("GET", "/v1/schedules", { ...req, query: q })).schedules;
  }

  /** Adds or replaces the schedule `key`: `kind` is enqueued with `payload` every `every_seconds`. */
  async putSchedule(key: string, spec: ScheduleSpec, options: { tenant?: string } & RequestOptions = {}): Promise<Schedule> {
    const { tenant, ...req } = options;
    const body = { ...spec, next_run_at: time(spec.next_run_at) };
    const a = await this.http.request<{ schedule: Schedule }>("PUT", `/v1/schedules/${encodeURIComponent(key)}`, {
      ...req,
      query: { tenant: tenant ?? this.tenant },
      body,
    });
    return a.schedule;
  }

  /** Removes the schedule `key`; the jobs it enqueued stay. */
  async deleteSchedule(key: string, options: { tenant?: string } & RequestOptions = {}): Promise<void> {
    const { tenant, ...req } = options;
    await this.http.request("DELETE", `/v1/schedules/${encodeURIComponent(key)}`, {
      ...req,
      query: { tenant: tenant ?? this.tenant },
    });
  }

  // Queues and the server.

  /** Every queue with its live counts (unscoped tokens). */
  async queues(req?: RequestOptions): Promise<Queue[]> {
    return (await this.http.request<{ queues: Queue[] }>("GET", "/v1/queues", req)).queues;
  }

  /** Stops claims from a queue (admin); `create` pauses a queue that has no jobs yet. */
  pauseQueue(name: string, options: { create?: boolean } & RequestOptions = {}): Promise<Queue> {
    return this.queueAction(name, "pause", options);
  }

  /** Lets claims take a queue's jobs again (admin). */
  resumeQueue(name: string, options: { create?: boolean } & RequestOptions = {}): Promise<Queue> {
    return this.queueAction(name, "resume", options);
  }

  /** The loaded contracts. */
  kinds(req?: RequestOptions): Promise<Kinds> {
    return this.http.request<Kinds>("GET", "/v1/kinds", req);
  }

  /** Totals by state and kind, and throughput. */
  stats(req?: RequestOptions): Promise<Stats> {
    return this.http.request<Stats>("GET", "/v1/stats", req);
  }

  /** The server's health; a SkiplockError with status 503 while the database does not answer or refuses writes. */
  health(req?: RequestOptions): Promise<Health> {
    return this.http.request<Health>("GET", "/healthz", req);
  }

  // The worker protocol, for callers that run their own loop; Worker uses these.

  /** Claims up to `max` jobs of a queue, waiting up to `wait_seconds` for work; `complete` reports finished jobs in the same call. */
  claim<J = Job>(queue: string, body: ClaimRequest, req?: RequestOptions): Promise<ClaimAnswer<J>> {
    const wait = (body.wait_seconds ?? 0) * 1000;
    return this.http.request<ClaimAnswer<J>>("POST", `/v1/queues/${encodeURIComponent(queue)}/claim`, {
      ...req,
      timeoutMs: (req?.timeoutMs ?? this.http.timeoutMs) + wait,
      body,
    });
  }

  /** Extends a claimed job's lease and reports progress and a checkpoint; 409 (`conflict`) when the lease is no longer this worker's. */
  heartbeat(id: number, workerID: string, body: HeartbeatRequest = {}, req?: RequestOptions): Promise<HeartbeatAnswer> {
    return this.http.request<HeartbeatAnswer>("POST", `/v1/jobs/${jobID(id)}/heartbeat`, {
      ...req,
      body: { worker_id: workerID, ...body },
    });
  }

  /** Completes a claimed job; `next` jobs are inserted in the same transaction. */
  async complete(id: number, workerID: string, body: CompleteRequest = {}, req?: RequestOptions): Promise<CompleteAnswer> {
    const next = body.next?.map((s) => this.spec(s));
    const a = await this.http.request<CompleteAnswer>("POST", `/v1/jobs/${jobID(id)}/complete`, {
      ...req,
      body: { worker_id: workerID, ...body, ...(next ? { next } : {}) },
    });
    return { job: a.job, next: a.next ?? [] };
  }

  /** Completes 1 to 1,000 claimed jobs in one call; each is fenced on its attempt and answered in order. */
  async completeMany(workerID: string, jobs: Completion[], req?: RequestOptions): Promise<CompletionResult[]> {
    const a = await this.http.request<{ results: CompletionResult[] }>("POST", "/v1/jobs/complete", {
      ...req,
      body: { worker_id: workerID, jobs },
    });
    return a.results;
  }

  /** Fails a claimed job's attempt: retried after the backoff (or `retry_in_seconds`) while retries are left and it is retryable, else failed. */
  async fail(id: number, workerID: string, body: FailRequest, req?: RequestOptions): Promise<Job> {
    const a = await this.http.request<{ job: Job }>("POST", `/v1/jobs/${jobID(id)}/fail`, {
      ...req,
      body: { worker_id: workerID, ...body },
    });
    return a.job;
  }

  private async jobAction(id: number, action: string, req?: RequestOptions): Promise<Job> {
    return (await this.http.request<{ job: Job }>("POST", `/v1/jobs/${jobID(id)}/${action}`, req)).job;
  }

  private async queueAction(name: string, action: string, options: { create?: boolean } & RequestOptions): Promise<Queue> {
    const { create, ...req } = options;
    const a = await this.http.request<{ queue: Queue }>("POST", `/v1/queues/${encodeURIComponent(name)}/${action}`, {
      ...req,
      body: create === undefined ? undefined : { create },
    });
    return a.queue;
  }

  private spec(s: JobSpec): Record<string, unknown> {
    const out: Record<string, unknown> = { ...s, run_at: time(s.run_at) };
    if (out.run_at === undefined) delete out.run_at;
    if (s.tenant === undefined && this.tenant !== undefined) out.tenant = this.tenant;
    return out;
  }

  private listQuery(f: ListFilter): Record<string, string | number | undefined | string[]> {
    return {
      state: Array.isArray(f.state) ? f.state.join(",") : f.state,
      kind: f.kind,
      queue: f.queue,
      tenant: f.tenant ?? this.tenant,
      workflow_id: f.workflow_id,
      tag: f.tag === undefined ? undefined : ([] as string[]).concat(f.tag),
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

/** KEY:VALUE query values, each VALUE as JSON. */
function pairs(m: Record<string, unknown> | undefined): string[] | undefined {
  return m === undefined ? undefined : Object.entries(m).map(([k, v]) => `${k}:${JSON.stringify(v)}`);
}

function time(t: string | Date | undefined): string | undefined {
  return t instanceof Date ? t.toISOString() : t;
}

function jobID(id: number): string {
  if (!Number.isSafeInteger(id) || id < 1) throw new RangeError(`id: must be a positive integer, got ${id}`);
  return String(id);
}
