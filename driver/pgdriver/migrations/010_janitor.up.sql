-- Runs of the janitor (retention), so that every process and server shows
-- the same history (GET /v1/janitor, skiplock janitor status).
CREATE TABLE skiplock_janitor_runs (
    id          bigserial   PRIMARY KEY,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    runner      text        NOT NULL,
    dry_run     boolean     NOT NULL,
    forced      boolean     NOT NULL,
    outcome     text        NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed')),
    message     text        NOT NULL DEFAULT '',
    jobs        bigint      NOT NULL DEFAULT 0,
    by_state    jsonb       NOT NULL DEFAULT '{}',
    partitions  integer     NOT NULL DEFAULT 0,
    bytes       bigint      NOT NULL DEFAULT 0,
    vaulted     bigint      NOT NULL DEFAULT 0
);

-- Retention keeps a job whose window key is still open; it finds those by
-- job id.
CREATE INDEX skiplock_unique_keys_job ON skiplock_unique_keys (job_id);
