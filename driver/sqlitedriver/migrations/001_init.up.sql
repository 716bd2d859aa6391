-- SQLite schema. Timestamps are INTEGER unix microseconds (UTC), so they
-- sort and compare as numbers; JSON columns are TEXT; booleans 0/1.
-- The hot table holds live jobs only; finished jobs move to the archive.
-- AUTOINCREMENT: an id is never handed out twice, even after the newest job
-- moved to the archive.
CREATE TABLE skiplock_jobs (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    kind                  TEXT    NOT NULL,
    op                    TEXT,
    queue                 TEXT    NOT NULL DEFAULT 'default',
    tenant                TEXT    NOT NULL DEFAULT '',
    state                 TEXT    NOT NULL CHECK (state IN ('scheduled', 'waiting', 'pending', 'running', 'paused')),
    priority              INTEGER NOT NULL DEFAULT 5 CHECK (priority BETWEEN 0 AND 10),
    payload               TEXT    NOT NULL DEFAULT '{}',
    metadata              TEXT    NOT NULL DEFAULT '{}',
    tags                  TEXT    NOT NULL DEFAULT '[]',
    attempt               INTEGER NOT NULL DEFAULT 0,
    max_retries           INTEGER NOT NULL DEFAULT 3,
    run_at                INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    started_at            INTEGER,
    finished_at           INTEGER,
    updated_at            INTEGER NOT NULL,
    lease_until           INTEGER,
    worker_id             TEXT,
    heartbeat_at          INTEGER,
    progress              INTEGER NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    progress_message      TEXT    NOT NULL DEFAULT '',
    checkpoint            TEXT,
    result                TEXT,
    errors                TEXT    NOT NULL DEFAULT '[]',
    idempotency_key       TEXT,
    depends_on            TEXT    NOT NULL DEFAULT '[]',
    workflow_id           TEXT,
    stage                 TEXT,
    cancel_requested      INTEGER NOT NULL DEFAULT 0,
    run_on_parent_failure INTEGER NOT NULL DEFAULT 0
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

-- Finished jobs: a plain table (no partitions in SQLite).
CREATE TABLE skiplock_jobs_archive (
    id                    INTEGER PRIMARY KEY,
    kind                  TEXT    NOT NULL,
    op                    TEXT,
    queue                 TEXT    NOT NULL DEFAULT 'default',
    tenant                TEXT    NOT NULL DEFAULT '',
    state                 TEXT    NOT NULL CHECK (state IN ('completed', 'failed', 'cancelled')),
    priority              INTEGER NOT NULL DEFAULT 5,
    payload               TEXT    NOT NULL DEFAULT '{}',
    metadata              TEXT    NOT NULL DEFAULT '{}',
    tags                  TEXT    NOT NULL DEFAULT '[]',
    attempt               INTEGER NOT NULL DEFAULT 0,
    max_retries           INTEGER NOT NULL DEFAULT 3,
    run_at                INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    started_at            INTEGER,
    finished_at           INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    lease_until           INTEGER,
    worker_id             TEXT,
    heartbeat_at          INTEGER,
    progress              INTEGER NOT NULL DEFAULT 0,
    progress_message      TEXT    NOT NULL DEFAULT '',
    checkpoint            TEXT,
    result                TEXT,
    errors                TEXT    NOT NULL DEFAULT '[]',
    idempotency_key       TEXT,
    depends_on            TEXT    NOT NULL DEFAULT '[]',
    workflow_id           TEXT,
    stage                 TEXT,
    cancel_requested      INTEGER NOT NULL DEFAULT 0,
    run_on_parent_failure INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX skiplock_jobs_archive_workflow ON skiplock_jobs_archive (workflow_id) WHERE workflow_id IS NOT NULL;
CREATE INDEX skiplock_jobs_archive_key ON skiplock_jobs_archive (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Policy "window": a key stays taken until expires_at, finished or not.
CREATE TABLE skiplock_unique_keys (
    tenant     TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    job_id     INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, key)
);

-- Unfinished dependencies: a row per (waiting job, parent not yet completed).
CREATE TABLE skiplock_job_deps (
    job_id    INTEGER NOT NULL,
    parent_id INTEGER NOT NULL,
    PRIMARY KEY (job_id, parent_id)
) WITHOUT ROWID;
CREATE INDEX skiplock_job_deps_parent ON skiplock_job_deps (parent_id);

CREATE TABLE skiplock_queues (
    name       TEXT    PRIMARY KEY,
    paused     INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE skiplock_leaders (
    name       TEXT    PRIMARY KEY,
    leader_id  TEXT    NOT NULL,
    elected_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

-- Recurring per-entity schedules; they outlive the entity's jobs.
CREATE TABLE skiplock_schedules (
    tenant        TEXT    NOT NULL DEFAULT '',
    key           TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    queue         TEXT    NOT NULL DEFAULT 'default',
    payload       TEXT    NOT NULL DEFAULT '{}',
    every_seconds REAL    NOT NULL CHECK (every_seconds > 0),
    next_run_at   INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (tenant, key)
);
CREATE INDEX skiplock_schedules_due ON skiplock_schedules (next_run_at);
