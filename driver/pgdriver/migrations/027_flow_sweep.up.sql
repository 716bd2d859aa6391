-- Idle flow keys are dropped (FlowSweep, docs/flow-control.md): without
-- that, a rule keyed by a payload property or a user keeps a slot set and a
-- bucket for every value it ever saw. A key is idle once no live job
-- carries it; these indexes answer that with one probe per key, and jobs
-- without keys have no entry in them.
CREATE INDEX skiplock_jobs_concurrency_key ON skiplock_jobs (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX skiplock_jobs_rate_key ON skiplock_jobs (rate_key) WHERE rate_key IS NOT NULL;

-- Live jobs may sit in spill tables (migration 025), which the probe reads
-- too: those made before now get the indexes here, later ones copy the hot
-- table's.
DO $$
DECLARE
    s text;
BEGIN
    FOR s IN SELECT name FROM skiplock_hot_spill WHERE to_regclass(quote_ident(name)) IS NOT NULL ORDER BY name LOOP
        EXECUTE format('CREATE INDEX ON %I (concurrency_key) WHERE concurrency_key IS NOT NULL', s);
        EXECUTE format('CREATE INDEX ON %I (rate_key) WHERE rate_key IS NOT NULL', s);
    END LOOP;
END $$;

-- A freed slot keeps taken_at, when a job of its key last started: the
-- sweep tells a key in use from one idle for a while by it, as it does a
-- bucket by refilled_at.
CREATE OR REPLACE FUNCTION skiplock_flow_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE skiplock_flow_slots SET job_id = NULL WHERE job_id = OLD.id;
    RETURN NULL;
END
$$;
