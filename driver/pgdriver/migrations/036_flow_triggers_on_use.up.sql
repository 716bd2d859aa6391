-- The triggers that free a job's concurrency slot (migrations 020, 027)
-- cost every job, flow keys or not: PostgreSQL reads each row a claim or a
-- completion changes once more to test their WHEN condition, about two
-- buffer accesses a job (docs/flow-control.md, "Cost"). Only a flow claim
-- takes a slot, so the driver makes them before its first flow claim
-- (skiplock_flow_triggers_make), on the hot table and its spill tables
-- (a spill table made later copies them), and they go here unless a flow
-- key already has slots.
CREATE FUNCTION skiplock_flow_triggers_make() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    t regclass;
BEGIN
    -- One maker at a time, and no spill table opened meanwhile (the driver
    -- takes this lock to open one, flowTriggersLock): the next maker finds
    -- them made, a spill table opened before is in pg_inherits below, one
    -- opened after copies them.
    PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.skiplock_flow_triggers'));
    IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'skiplock_jobs'::regclass AND tgname = 'skiplock_flow_release_delete') THEN
        -- A process from before 036 may have taken slots with no trigger
        -- to free them. With no job leaving running meanwhile (the lock
        -- the triggers need, taken first), a slot whose job is not running
        -- is such a slot.
        LOCK TABLE skiplock_jobs IN SHARE ROW EXCLUSIVE MODE;
        UPDATE skiplock_flow_slots s SET job_id = NULL, taken_at = NULL
        WHERE s.job_id IS NOT NULL
          AND NOT EXISTS (SELECT FROM skiplock_jobs j WHERE j.id = s.job_id AND j.state = 'running');
    END IF;
    FOR t IN SELECT 'skiplock_jobs'::regclass
             UNION ALL SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'skiplock_jobs'::regclass LOOP
        IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = t AND tgname = 'skiplock_flow_release_update') THEN
            EXECUTE format('CREATE TRIGGER skiplock_flow_release_update AFTER UPDATE OF state ON %s FOR EACH ROW'
                || ' WHEN (OLD.state = ''running'' AND NEW.state <> ''running'' AND OLD.concurrency_key IS NOT NULL)'
                || ' EXECUTE FUNCTION skiplock_flow_release()', t);
        END IF;
        IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = t AND tgname = 'skiplock_flow_release_delete') THEN
            EXECUTE format('CREATE TRIGGER skiplock_flow_release_delete AFTER DELETE ON %s FOR EACH ROW'
                || ' WHEN (OLD.state = ''running'' AND OLD.concurrency_key IS NOT NULL)'
                || ' EXECUTE FUNCTION skiplock_flow_release()', t);
        END IF;
    END LOOP;
END
$$;

DO $$
DECLARE
    t regclass;
BEGIN
    IF NOT EXISTS (SELECT FROM skiplock_flow_slots) THEN
        FOR t IN SELECT 'skiplock_jobs'::regclass
                 UNION ALL SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'skiplock_jobs'::regclass LOOP
            EXECUTE format('DROP TRIGGER IF EXISTS skiplock_flow_release_update ON %s', t);
            EXECUTE format('DROP TRIGGER IF EXISTS skiplock_flow_release_delete ON %s', t);
        END LOOP;
    END IF;
END
$$;
