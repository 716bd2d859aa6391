-- skiplock_enqueue_spill as migration 026 made it: the insert not preceded
-- by a lock on the spill table.
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
