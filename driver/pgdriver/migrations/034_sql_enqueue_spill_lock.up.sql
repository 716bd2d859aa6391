-- skiplock_enqueue_spill (migration 026) inserts into the spill table it
-- looked up, in the caller's transaction. A spill table dropped between the
-- lookup and the insert would fail that statement and abort the caller's
-- transaction. Now it first locks the spill table, in a subtransaction that
-- writes nothing (so it takes no transaction id of its own), once per
-- transaction: a table gone by then sends the job to the hot table (NULL),
-- and a table locked stays until the caller's transaction ends (a drop
-- takes its exclusive lock), whatever the clocks say.
CREATE OR REPLACE FUNCTION skiplock_enqueue_spill(kind text, op text, queue text, tenant text, priority integer,
    payload jsonb, metadata jsonb, tags text[], max_retries integer, run_at timestamptz,
    workflow_id text, stage text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    target text := skiplock_enqueue_spill_target();
    id     bigint;
BEGIN
    IF target IS NULL THEN
        RETURN NULL;
    END IF;
    -- Once per transaction and spill table: the lock lasts until it ends.
    IF current_setting('skiplock.spill_locked', true) IS DISTINCT FROM current_schema() || '.' || target THEN
        BEGIN
            EXECUTE format('LOCK TABLE ONLY %I IN ROW EXCLUSIVE MODE', target);
        EXCEPTION WHEN undefined_table THEN
            RETURN NULL; -- dropped since the lookup
        END;
        PERFORM set_config('skiplock.spill_locked', current_schema() || '.' || target, true);
    END IF;
    EXECUTE format('INSERT INTO %I (kind, op, queue, tenant, state, priority, payload, metadata, tags,
            max_retries, run_at, workflow_id, stage)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id', target)
    INTO id
    USING kind, op, queue, tenant, CASE WHEN coalesce(run_at, now()) > now() THEN 'scheduled' ELSE 'pending' END,
        priority, payload, metadata, tags, max_retries, coalesce(run_at, now()), workflow_id, stage;
    RETURN id;
END $$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION skiplock_enqueue_spill(text, text, text, text, integer, jsonb, jsonb, text[], '
        'integer, timestamptz, text, text) SET search_path = %I, pg_temp', current_schema());
END $$;
