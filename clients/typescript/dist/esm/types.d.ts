import type { components, paths } from "./generated/openapi.js";
type Schemas = components["schemas"];
type JSONBody<Op> = Op extends {
    requestBody?: {
        content: {
            "application/json": infer B;
        };
    };
} ? B : never;
type Answer<Op, Status extends number> = Op extends {
    responses: {
        [S in Status]: {
            content: {
                "application/json": infer A;
            };
        };
    };
} ? A : never;
/** A job state. */
export type State = Schemas["State"];
/** The job object: every field is present, an unset one `null` (docs/api.md, "The job object"). */
export type Job = Required<Omit<Schemas["Job"], "traceparent">> & {
    /** The W3C trace context the job carries, absent when none. */
    traceparent?: string;
};
/** One entry of a job's `errors`. */
export type JobErrorEntry = Job["errors"][number];
/** A job spec as the API takes it (`POST /v1/jobs`); `run_at` may also be a Date. */
export type JobSpec = Omit<Schemas["JobSpec"], "run_at"> & {
    run_at?: string | Date;
};
/** A job as an enqueue answers it: `duplicate` is true when a live job with the same idempotency key was answered instead. */
export type EnqueuedJob = Job & {
    duplicate: boolean;
};
/** The options of an enqueue: a spec without its kind and payload. */
export type EnqueueOptions = Omit<JobSpec, "kind" | "payload">;
/** An error answer's body. */
export type ErrorBody = Schemas["Error"];
/** Filters of `GET /v1/jobs` (docs/api.md): times may be Dates, `state` and `tag` lists, `metadata` an object of KEY → value. */
export interface ListFilter {
    state?: State | State[];
    kind?: string;
    queue?: string;
    tenant?: string;
    workflow_id?: string;
    tag?: string | string[];
    /** Jobs whose metadata has each key with that value (compared as JSON). */
    metadata?: Record<string, unknown>;
    /** Jobs whose payload has each key with that value (compared as JSON); a dotted key (`order.id`) reaches into objects. */
    payload?: Record<string, unknown>;
    worker_id?: string;
    error_type?: string;
    /** Jobs with an attempt error whose message contains this text, letters compared without case. */
    error_message?: string;
    idempotency_key?: string;
    created_after?: string | Date;
    created_before?: string | Date;
    finished_after?: string | Date;
    finished_before?: string | Date;
    /** Jobs a page: 1–1000, default 50. */
    limit?: number;
    /** The `nextCursor` of the page before. */
    cursor?: string;
}
/** A page of jobs, newest first; `nextCursor` is "" on the last page. */
export interface JobPage {
    jobs: Job[];
    nextCursor: string;
}
type BulkBody = JSONBody<paths["/v1/jobs/bulk"]["post"]>;
/** A bulk action. */
export type BulkAction = BulkBody["action"];
/** What a bulk action picks; at least one field. */
export type BulkFilter = BulkBody["filter"];
/** How many jobs a bulk action picked and acted on. */
export type BulkResult = Required<Answer<paths["/v1/jobs/bulk"]["post"], 200>>;
/** A workflow: its jobs oldest first and its state. */
export type Workflow = Answer<paths["/v1/workflows/{workflow_id}"]["get"], 200> & {
    jobs: Job[];
};
/** A recurring schedule. */
export type Schedule = Required<Schemas["Schedule"]>;
/** The body of `PUT /v1/schedules/{key}`; `next_run_at` may also be a Date. */
export type ScheduleSpec = Omit<JSONBody<paths["/v1/schedules/{key}"]["put"]>, "next_run_at"> & {
    next_run_at?: string | Date;
};
/** A queue with its live counts. */
export type Queue = Schemas["Queue"];
/** The loaded contracts (`GET /v1/kinds`). */
export type Kinds = Answer<paths["/v1/kinds"]["get"], 200>;
/** Totals by state and kind, and throughput (`GET /v1/stats`). */
export type Stats = Answer<paths["/v1/stats"]["get"], 200>;
/** `GET /v1/healthz`'s answer when healthy. */
export type Health = Answer<paths["/healthz"]["get"], 200>;
/** The body of a claim (`POST /v1/queues/{queue}/claim`). */
export type ClaimRequest = JSONBody<paths["/v1/queues/{queue}/claim"]["post"]>;
/** A claim's answer: the jobs (with only the `fields` asked for, and always `id` and `attempt`), and the outcome of the reports it carried. */
export interface ClaimAnswer<J = Job> {
    jobs: J[];
    completed?: CompletionResult[];
}
/** One job of `POST /v1/jobs/complete`. */
export type Completion = JSONBody<paths["/v1/jobs/complete"]["post"]>["jobs"][number];
/** One job's outcome in `POST /v1/jobs/complete`. */
export type CompletionResult = NonNullable<Answer<paths["/v1/jobs/complete"]["post"], 200>["results"]>[number];
/** The body of a heartbeat, without `worker_id`. */
export type HeartbeatRequest = Omit<JSONBody<paths["/v1/jobs/{id}/heartbeat"]["post"]>, "worker_id">;
/** A heartbeat's answer. */
export type HeartbeatAnswer = Answer<paths["/v1/jobs/{id}/heartbeat"]["post"], 200>;
/** The body of a single-job completion, without `worker_id`. */
export type CompleteRequest = Omit<JSONBody<paths["/v1/jobs/{id}/complete"]["post"]>, "worker_id">;
/** A single-job completion's answer: the job and the next-stage jobs it inserted. */
export interface CompleteAnswer {
    job: Job;
    next: Job[];
}
/** The body of a failure report, without `worker_id`. */
export type FailRequest = Omit<JSONBody<paths["/v1/jobs/{id}/fail"]["post"]>, "worker_id">;
export {};
