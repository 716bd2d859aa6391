-- Runs of the janitor (retention), so that every process shows the same
-- history (GET /v1/janitor, skiplock janitor status).
CREATE TABLE skiplock_janitor_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER NOT NULL,
    runner      TEXT    NOT NULL,
    dry_run     INTEGER NOT NULL,
    forced      INTEGER NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed')),
    message     TEXT    NOT NULL DEFAULT '',
    jobs        INTEGER NOT NULL DEFAULT 0,
    by_state    TEXT    NOT NULL DEFAULT '{}',
    partitions  INTEGER NOT NULL DEFAULT 0,
    bytes       INTEGER NOT NULL DEFAULT 0,
    vaulted     INTEGER NOT NULL DEFAULT 0
);

-- Retention keeps a job whose window key is still open (found by job id);
-- it reads the archive by age along skiplock_jobs_archive_finished (002).
CREATE INDEX skiplock_unique_keys_job ON skiplock_unique_keys (job_id);
