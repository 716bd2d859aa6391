-- Flow control: rate limits and concurrency keys (docs/flow-control.md).
-- A limited job carries its keys, set when it is inserted; an unlimited
-- job has none, and no claim or completion of it reads the tables below.
ALTER TABLE skiplock_jobs ADD COLUMN concurrency_key text, ADD COLUMN rate_key text;

-- One row per running place of a concurrency key: a key limited to K
-- running jobs has K slots, numbered 1 to K (a negative number is a slot
-- retired by a lowered limit, never taken again). A claim takes a free
-- slot (job_id NULL) with FOR UPDATE SKIP LOCKED, and a slot is freed only
-- by the job that holds it leaving running (the triggers below), so no two
-- claims share a slot and a finished or rescued job never keeps one.
CREATE TABLE skiplock_flow_slots (
    key      text        NOT NULL,
    slot     integer     NOT NULL,
    job_id   bigint,
    taken_at timestamptz,
    PRIMARY KEY (key, slot)
);
CREATE INDEX skiplock_flow_slots_job ON skiplock_flow_slots (job_id) WHERE job_id IS NOT NULL;
-- The free slots of a key: a claim's probe for room, and its pick.
CREATE INDEX skiplock_flow_slots_free ON skiplock_flow_slots (key, slot) WHERE job_id IS NULL;

-- A token bucket per rate key: rate tokens a second, at most burst saved.
CREATE TABLE skiplock_flow_buckets (
    key         text             PRIMARY KEY,
    rate        double precision NOT NULL,
    burst       double precision NOT NULL,
    tokens      double precision NOT NULL,
    refilled_at timestamptz      NOT NULL DEFAULT now()
);

-- A running job with a concurrency key frees its slot whichever way it
-- leaves running: completed, failed, retried, snoozed, paused, cancelled
-- or rescued. The WHEN clause keeps unlimited jobs from calling it.
CREATE FUNCTION skiplock_flow_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE skiplock_flow_slots SET job_id = NULL, taken_at = NULL WHERE job_id = OLD.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER skiplock_flow_release_update AFTER UPDATE OF state ON skiplock_jobs
    FOR EACH ROW WHEN (OLD.state = 'running' AND NEW.state <> 'running' AND OLD.concurrency_key IS NOT NULL)
    EXECUTE FUNCTION skiplock_flow_release();
CREATE TRIGGER skiplock_flow_release_delete AFTER DELETE ON skiplock_jobs
    FOR EACH ROW WHEN (OLD.state = 'running' AND OLD.concurrency_key IS NOT NULL)
    EXECUTE FUNCTION skiplock_flow_release();
