-- skiplock_enqueue() sends a plain job (one without an idempotency key)
-- where the library sends one: to the spill target while a transaction held
-- open elsewhere keeps the hot table (migration 025), else to the hot table.

-- skiplock_enqueue_spill_target answers the spill target, or NULL when new
-- jobs go to the hot table. It runs as the role that applied this
-- migration, so that a role allowed to enqueue need not read
-- skiplock_hot_spill. A target that the caller's snapshot still sees but
-- that has since been dropped (a repeatable read transaction that began
-- before its holder ended) is not answered: to_regclass reads the catalog
-- as it is now.
CREATE FUNCTION skiplock_enqueue_spill_target() RETURNS text
LANGUAGE sql SECURITY DEFINER AS $$
    SELECT s.name FROM skiplock_hot_spill s WHERE s.target AND to_regclass(quote_ident(s.name)) IS NOT NULL
$$;

-- skiplock_enqueue_spill inserts a plain job, its fields checked by
-- skiplock_enqueue, into the spill target and answers its id; NULL (nothing
-- stored) when there is no target. A spill table is dropped only a grace
-- (SpillLimits.Grace, 10 s by default) after it stopped being the target,
-- and the insert follows the lookup at once. A snapshot older than the grace
-- may still name a table dropped between the lookup and the insert: the
-- statement then fails (undefined_table, nothing stored) and can be run
-- again. A subtransaction per job would spare that, but many of them in one
-- transaction slow every snapshot taken until it ends.
CREATE FUNCTION skiplock_enqueue_spill(kind text, op text, queue text, tenant text, priority integer,
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
    EXECUTE format('ALTER FUNCTION skiplock_enqueue_spill_target() SET search_path = %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION skiplock_enqueue_spill(text, text, text, text, integer, jsonb, jsonb, text[], '
        'integer, timestamptz, text, text) SET search_path = %I, pg_temp', current_schema());
END $$;

-- skiplock_enqueue (migration 018) calls skiplock_enqueue_spill before its
-- insert into the hot table. Its text is changed where it stands rather
-- than written out again; a function whose text is not 018's is refused.
DO $do$
DECLARE
    def  text := pg_get_functiondef('skiplock_enqueue(text, jsonb, jsonb)'::regprocedure);
    at   text := $s$    FOR try IN 1 .. 5 LOOP
        INSERT INTO skiplock_jobs $s$;
    call text := $s$    -- A plain job goes to the spill target while there is one (migration
    -- 026); there is one only while the hot table has a child.
    IF j_key = '' AND EXISTS (SELECT FROM pg_inherits WHERE inhparent = 'skiplock_jobs'::regclass) THEN
        id := skiplock_enqueue_spill(j_kind, nullif(j_op, ''), j_queue, j_tenant, j_prio, j_data, j_meta, j_tags,
            j_retries, j_run, nullif(skiplock_enqueue_text(o, 'workflow_id', 500), ''),
            nullif(skiplock_enqueue_text(o, 'stage', 200), ''));
        IF id IS NOT NULL THEN
            PERFORM pg_notify('skiplock_insert_' || left(current_schema(), 40), j_queue);
            RETURN;
        END IF;
    END IF;
$s$;
BEGIN
    IF position(at IN def) = 0 OR position('skiplock_enqueue_spill' IN def) > 0 THEN
        RAISE EXCEPTION 'skiplock_enqueue is not as migration 018 made it: not changed';
    END IF;
    EXECUTE replace(def, at, call || at);
END $do$;
