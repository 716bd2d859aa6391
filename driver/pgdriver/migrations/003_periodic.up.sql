-- The last tick each periodic (cron) job was enqueued for; it survives
-- restarts so that a new leader knows which ticks were missed.
CREATE TABLE skiplock_periodic (
    name       text        PRIMARY KEY,
    last_tick  timestamptz NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
