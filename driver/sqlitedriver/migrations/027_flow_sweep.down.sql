DROP TRIGGER skiplock_flow_release_update;
DROP TRIGGER skiplock_flow_release_delete;
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
DROP INDEX skiplock_jobs_rate_key;
DROP INDEX skiplock_jobs_concurrency_key;
