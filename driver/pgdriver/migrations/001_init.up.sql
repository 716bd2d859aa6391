-- The hot table holds live jobs only; finished jobs move to the archive.
CREATE SEQUENCE skiplock_jobs_id_seq AS bigint;

CREATE TABLE skiplock_jobs (
    id                    bigint      NOT NULL DEFAULT nextval('skiplock_jobs_id_seq') PRIMARY KEY,
    kind                  text        NOT NULL,
    op                    text,
    queue                 text        NOT NULL DEFAULT 'default',
    tenant                text        NOT NULL DEFAULT '',
    state                 text        NOT NULL,
    priority              smallint    NOT NULL DEFAULT 5,
    payload               jsonb       NOT NULL DEFAULT '{}',
    metadata              jsonb       NOT NULL DEFAULT '{}',
    tags                  text[]      NOT NULL DEFAULT '{}',
    attempt               integer     NOT NULL DEFAULT 0,
    max_retries           integer     NOT NULL DEFAULT 3,
    run_at                timestamptz NOT NULL DEFAULT now(),
    created_at            timestamptz NOT NULL DEFAULT now(),
    started_at            timestamptz,
    finished_at           timestamptz,
    updated_at            timestamptz NOT NULL DEFAULT now(),
    lease_until           timestamptz,
    worker_id             text,
    heartbeat_at          timestamptz,
    progress              smallint    NOT NULL DEFAULT 0,
    progress_message      text        NOT NULL DEFAULT '',
    checkpoint            jsonb,
    result                jsonb,
    errors                jsonb       NOT NULL DEFAULT '[]',
    idempotency_key       text,
    depends_on            bigint[]    NOT NULL DEFAULT '{}',
    workflow_id           text,
    stage                 text,
    cancel_requested      boolean     NOT NULL DEFAULT false,
    run_on_parent_failure boolean     NOT NULL DEFAULT false,
    CONSTRAINT skiplock_jobs_priority CHECK (priority BETWEEN 0 AND 10),
    CONSTRAINT skiplock_jobs_progress CHECK (progress BETWEEN 0 AND 100),
    CONSTRAINT skiplock_jobs_live CHECK (state IN ('scheduled', 'waiting', 'pending', 'running', 'paused'))
);

-- Claim path: the head of a queue in claim order.
CREATE INDEX skiplock_jobs_claim ON skiplock_jobs (queue, priority DESC, run_at, id) WHERE state = 'pending';
-- Scheduler path: due scheduled jobs.
CREATE INDEX skiplock_jobs_scheduled ON skiplock_jobs (run_at) WHERE state = 'scheduled';
-- Rescuer path: expired leases.
CREATE INDEX skiplock_jobs_lease ON skiplock_jobs (lease_until) WHERE state = 'running';
-- Policy "active": one live job per key.
CREATE UNIQUE INDEX skiplock_jobs_idempotency ON skiplock_jobs (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Dependency sweep: waiting jobs.
CREATE INDEX skiplock_jobs_waiting ON skiplock_jobs (id) WHERE state = 'waiting';
CREATE INDEX skiplock_jobs_workflow ON skiplock_jobs (workflow_id) WHERE workflow_id IS NOT NULL;

-- Finished jobs, partitioned by day of finished_at so that retention drops
-- partitions instead of deleting rows.
CREATE TABLE skiplock_jobs_archive (
    LIKE skiplock_jobs INCLUDING DEFAULTS,
    CONSTRAINT skiplock_jobs_archive_finished CHECK (state IN ('completed', 'failed', 'cancelled'))
) PARTITION BY RANGE (finished_at);
ALTER TABLE skiplock_jobs_archive ALTER COLUMN finished_at SET NOT NULL;
CREATE TABLE skiplock_jobs_archive_default PARTITION OF skiplock_jobs_archive DEFAULT;
CREATE INDEX skiplock_jobs_archive_id ON skiplock_jobs_archive (id);
CREATE INDEX skiplock_jobs_archive_workflow ON skiplock_jobs_archive (workflow_id) WHERE workflow_id IS NOT NULL;
CREATE INDEX skiplock_jobs_archive_key ON skiplock_jobs_archive (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Policy "window": a key stays taken until expires_at, finished or not.
CREATE TABLE skiplock_unique_keys (
    tenant     text        NOT NULL,
    key        text        NOT NULL,
    job_id     bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, key)
);

-- Unfinished dependencies: a row per (waiting job, parent not yet completed).
CREATE TABLE skiplock_job_deps (
    job_id    bigint NOT NULL,
    parent_id bigint NOT NULL,
    PRIMARY KEY (job_id, parent_id)
);
CREATE INDEX skiplock_job_deps_parent ON skiplock_job_deps (parent_id);

CREATE TABLE skiplock_queues (
    name       text        PRIMARY KEY,
    paused     boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE skiplock_leaders (
    name       text        PRIMARY KEY,
    leader_id  text        NOT NULL,
    elected_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);

-- Recurring per-entity schedules; they outlive the entity's jobs.
CREATE TABLE skiplock_schedules (
    tenant        text        NOT NULL DEFAULT '',
    key           text        NOT NULL,
    kind          text        NOT NULL,
    queue         text        NOT NULL DEFAULT 'default',
    payload       jsonb       NOT NULL DEFAULT '{}',
    every_seconds double precision NOT NULL CHECK (every_seconds > 0),
    next_run_at   timestamptz NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, key)
);
CREATE INDEX skiplock_schedules_due ON skiplock_schedules (next_run_at);
