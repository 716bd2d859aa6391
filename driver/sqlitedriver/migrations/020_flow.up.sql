-- Flow control: rate limits and concurrency keys (docs/flow-control.md).
-- A limited job carries its keys, set when it is inserted; an unlimited
-- job has none, and no claim or completion of it reads the tables below.
ALTER TABLE skiplock_jobs ADD COLUMN concurrency_key TEXT;
ALTER TABLE skiplock_jobs ADD COLUMN rate_key TEXT;

-- One row per running place of a concurrency key: a key limited to K
-- running jobs has K slots, numbered 1 to K (a negative number is a slot
-- retired by a lowered limit, never taken again). A claim takes a free
-- slot (job_id NULL); a slot is freed only by the job that holds it
-- leaving running (the triggers below), so a finished or rescued job never
-- keeps one.
CREATE TABLE skiplock_flow_slots (
    key      TEXT    NOT NULL,
    slot     INTEGER NOT NULL,
    job_id   INTEGER,
    taken_at INTEGER,
    PRIMARY KEY (key, slot)
);
CREATE INDEX skiplock_flow_slots_job ON skiplock_flow_slots (job_id) WHERE job_id IS NOT NULL;
-- The free slots of a key: a claim's probe for room, and its pick.
CREATE INDEX skiplock_flow_slots_free ON skiplock_flow_slots (key, slot) WHERE job_id IS NULL;

-- A token bucket per rate key: rate tokens a second, at most burst saved;
-- refilled_at in unix microseconds.
CREATE TABLE skiplock_flow_buckets (
    key         TEXT    PRIMARY KEY,
    rate        REAL    NOT NULL,
    burst       REAL    NOT NULL,
    tokens      REAL    NOT NULL,
    refilled_at INTEGER NOT NULL
);

-- A running job with a concurrency key frees its slot whichever way it
-- leaves running.
CREATE TRIGGER skiplock_flow_release_update AFTER UPDATE OF state ON skiplock_jobs
    WHEN OLD.state = 'running' AND NEW.state <> 'running' AND OLD.concurrency_key IS NOT NULL
BEGIN
    UPDATE skiplock_flow_slots SET job_id = NULL, taken_at = NULL WHERE job_id = OLD.id;
END;
CREATE TRIGGER skiplock_flow_release_delete AFTER DELETE ON skiplock_jobs
    WHEN OLD.state = 'running' AND OLD.concurrency_key IS NOT NULL
BEGIN
    UPDATE skiplock_flow_slots SET job_id = NULL, taken_at = NULL WHERE job_id = OLD.id;
END;
