-- The triggers that free a job's concurrency slot (migrations 020, 027)
-- cost every job, flow keys or not: PostgreSQL reads each row a claim or a
-- completion changes once more to test their WHEN condition, about two
-- buffer accesses a job (docs/flow-control.md, "Cost"). Only a flow claim
-- takes a slot, so the driver makes them before its first flow claim
-- (skiplock_flow_triggers_make), on the hot table and its spill tables,
-- and they go here unless a flow key already has slots.
--
-- The maker and the opening of a spill table take one advisory lock
-- first, so that a spill table is either listed by the maker or copies the
-- triggers it made.
CREATE FUNCTION skiplock_flow_triggers_make() RETURNS void LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    t regclass;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.skiplock_flow_triggers'));
    IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'skiplock_jobs'::regclass AND tgname = 'skiplock_flow_release_delete') THEN
        -- A process from before 036 may have taken slots with no trigger
        -- to free them. With no job leaving running meanwhile (the lock
        -- the triggers need, taken first), a slot whose job is not running
        -- is such a slot. A freed slot keeps its taken_at (migration 027).
        LOCK TABLE skiplock_jobs IN SHARE ROW EXCLUSIVE MODE;
        UPDATE skiplock_flow_slots s SET job_id = NULL
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

-- skiplock_hot_spill_open (migration 025) under the same lock, whichever
-- driver calls it; its own lock wait bounds the wait for this one too.
ALTER FUNCTION skiplock_hot_spill_open(integer) RENAME TO skiplock_hot_spill_open_unlocked;
CREATE FUNCTION skiplock_hot_spill_open(lock_wait_ms integer) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('lock_timeout', lock_wait_ms || 'ms', true);
    PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.skiplock_flow_triggers'));
    RETURN skiplock_hot_spill_open_unlocked(lock_wait_ms);
EXCEPTION WHEN lock_not_available THEN
    RETURN ''; -- nothing made
END
$$;

DO $$
DECLARE
    t regclass;
BEGIN
    EXECUTE format('ALTER FUNCTION skiplock_flow_triggers_make() SET search_path = %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION skiplock_hot_spill_open(integer) SET search_path = %I, pg_temp', current_schema());
    IF NOT EXISTS (SELECT FROM skiplock_flow_slots) THEN
        FOR t IN SELECT 'skiplock_jobs'::regclass
                 UNION ALL SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'skiplock_jobs'::regclass LOOP
            EXECUTE format('DROP TRIGGER IF EXISTS skiplock_flow_release_update ON %s', t);
            EXECUTE format('DROP TRIGGER IF EXISTS skiplock_flow_release_delete ON %s', t);
        END LOOP;
    END IF;
END
$$;
