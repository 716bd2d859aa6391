-- The triggers are there again whatever the flow keys, as before 036; a
-- schema on Citus has none (citus.sql).
DO $$
DECLARE
    citus boolean := false;
BEGIN
    IF to_regclass('pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = ''skiplock_jobs''::regclass)' INTO citus;
    END IF;
    IF NOT citus THEN
        PERFORM skiplock_flow_triggers_make();
    END IF;
END
$$;
DROP FUNCTION skiplock_flow_triggers_make();
DROP FUNCTION skiplock_hot_spill_open(integer);
ALTER FUNCTION skiplock_hot_spill_open_unlocked(integer) RENAME TO skiplock_hot_spill_open;
