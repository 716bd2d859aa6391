-- Idle flow keys are dropped (FlowSweep, docs/flow-control.md): without
-- that, a rule keyed by a payload property or a user keeps a slot set and a
-- bucket for every value it ever saw. A key is idle once no live job
-- carries it; these indexes answer that with one probe per key, and jobs
-- without keys have no entry in them.
CREATE INDEX skiplock_jobs_concurrency_key ON skiplock_jobs (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX skiplock_jobs_rate_key ON skiplock_jobs (rate_key) WHERE rate_key IS NOT NULL;

-- A freed slot keeps taken_at, when a job of its key last started: the
-- sweep tells a key in use from one idle for a while by it, as it does a
-- bucket by refilled_at.
DROP TRIGGER skiplock_flow_release_update;
DROP TRIGGER skiplock_flow_release_delete;
CREATE TRIGGER skiplock_flow_release_update AFTER UPDATE OF state ON skiplock_jobs
    WHEN OLD.state = 'running' AND NEW.state <> 'running' AND OLD.concurrency_key IS NOT NULL
BEGIN
    UPDATE skiplock_flow_slots SET job_id = NULL WHERE job_id = OLD.id;
END;
CREATE TRIGGER skiplock_flow_release_delete AFTER DELETE ON skiplock_jobs
    WHEN OLD.state = 'running' AND OLD.concurrency_key IS NOT NULL
BEGIN
    UPDATE skiplock_flow_slots SET job_id = NULL WHERE job_id = OLD.id;
END;
