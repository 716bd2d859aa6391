-- The last tick each periodic (cron) job was enqueued for; it survives
-- restarts so that a new leader knows which ticks were missed.
CREATE TABLE skiplock_periodic (
    name       TEXT    PRIMARY KEY,
    last_tick  INTEGER NOT NULL, -- unix microseconds, UTC
    updated_at INTEGER NOT NULL
);
