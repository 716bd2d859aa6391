CREATE TABLE skiplock_tokens (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT    NOT NULL DEFAULT '',
    hash       TEXT    NOT NULL UNIQUE,
    role       TEXT    NOT NULL CHECK (role IN ('admin', 'producer', 'worker', 'viewer')),
    tenant     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);

-- The event feed and throughput statistics read recent finishes.
CREATE INDEX skiplock_jobs_archive_finished ON skiplock_jobs_archive (finished_at);
