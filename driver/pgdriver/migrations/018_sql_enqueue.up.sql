-- Enqueue from SQL (docs/sql.md): skiplock_enqueue(kind, payload, opts)
-- stores a job inside the caller's transaction (a trigger, an RPC) with the
-- library's defaults, bounds, contracts and wake-up. PostgreSQL only.

-- The contract set's settings for kinds it does not declare (queue,
-- priority, max_retries); NULL in versions applied before this migration.
ALTER TABLE skiplock_contracts ADD COLUMN defaults jsonb;

-- The functions run with search_path pinned to the schema of Skiplock's
-- tables (set at the end of this file), whoever calls them and from where.

-- skiplock_enqueue_refuse raises the error of a refused field: SQLSTATE
-- 22023 (invalid_parameter_value), the message "field: what is wrong", the
-- field in the error's column name.
CREATE FUNCTION skiplock_enqueue_refuse(field text, message text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value', MESSAGE = field || ': ' || message, COLUMN = field;
END $$;

-- skiplock_enqueue_json checks stored JSON as the library does: nested at
-- most 200 levels, numbers within ±1e300 (0 or at least 1e-300 apart from
-- it). jsonb refuses NUL characters itself.
CREATE FUNCTION skiplock_enqueue_json(field text, v jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    n numeric;
BEGIN
    IF jsonb_path_exists(v, 'strict $.**{201}') THEN
        PERFORM skiplock_enqueue_refuse(field, 'is nested deeper than 200 levels');
    END IF;
    FOR n IN SELECT x::text::numeric FROM jsonb_path_query(v, 'strict $.** ? (@.type() == "number")') x LOOP
        IF abs(n) > 1e300 OR (n <> 0 AND abs(n) < 1e-300) THEN
            PERFORM skiplock_enqueue_refuse(field, format('Number %s is out of range', left(n::text, 40)));
        END IF;
    END LOOP;
END $$;

-- skiplock_enqueue_text answers the string option o->field ('' when absent
-- or null), at most max bytes.
CREATE FUNCTION skiplock_enqueue_text(o jsonb, field text, max integer) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v jsonb := o -> field;
BEGIN
    IF v IS NULL OR v = 'null' THEN
        RETURN '';
    END IF;
    IF jsonb_typeof(v) <> 'string' THEN
        PERFORM skiplock_enqueue_refuse(field, 'must be a string, got JSON ' || jsonb_typeof(v));
    END IF;
    IF octet_length(v ->> 0) > max THEN
        PERFORM skiplock_enqueue_refuse(field, format('must be at most %s bytes, got %s', max, octet_length(v ->> 0)));
    END IF;
    RETURN v ->> 0;
END $$;

-- skiplock_enqueue_int answers the integer option o->field within
-- [lo, hi], NULL when absent or null.
CREATE FUNCTION skiplock_enqueue_int(o jsonb, field text, lo integer, hi integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v jsonb := o -> field;
BEGIN
    IF v IS NULL OR v = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(v) <> 'number' OR v::text !~ '^-?[0-9]{1,18}$' THEN
        PERFORM skiplock_enqueue_refuse(field, 'must be an integer, got JSON ' || left(v::text, 40));
    END IF;
    IF v::text::bigint NOT BETWEEN lo AND hi THEN
        PERFORM skiplock_enqueue_refuse(field, format('must be between %s and %s, got %s', lo, hi, v));
    END IF;
    RETURN v::text::integer;
END $$;

-- skiplock_enqueue_refs joins the values of a kind's unique references with
-- ':' as the contract package does: a string as itself, a number, boolean
-- or null as its JSON. An object or array value is refused: its compact
-- JSON is the library's to write.
CREATE FUNCTION skiplock_enqueue_refs(refs jsonb, kind text, tenant text, queue text, op text, payload jsonb)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    ref  text;
    v    jsonb;
    seg  text;
    parts text[] := '{}';
BEGIN
    FOR ref IN SELECT jsonb_array_elements_text(refs) LOOP
        CASE ref
        WHEN 'tenant' THEN v := to_jsonb(tenant);
        WHEN 'queue' THEN v := to_jsonb(queue);
        WHEN 'op' THEN v := to_jsonb(op);
        ELSE
            v := payload;
            FOREACH seg IN ARRAY string_to_array(substr(ref, length('payload.') + 1), '.') LOOP
                v := CASE jsonb_typeof(v)
                     WHEN 'object' THEN v -> seg
                     WHEN 'array' THEN CASE WHEN seg ~ '^[0-9]{1,9}$' THEN v -> seg::integer END
                     END;
            END LOOP;
        END CASE;
        IF v IS NULL THEN
            PERFORM skiplock_enqueue_refuse(ref, format('missing property %s (kind %s derives its idempotency key from it)',
                to_jsonb(regexp_replace(ref, '^.*\.', '')), to_jsonb(kind)));
        END IF;
        IF jsonb_typeof(v) IN ('object', 'array') THEN
            PERFORM skiplock_enqueue_refuse(ref, format('is an %s; kind %s derives its idempotency key from it, '
                'which skiplock_enqueue does only from strings, numbers and booleans: give an idempotency_key',
                jsonb_typeof(v), to_jsonb(kind)));
        END IF;
        parts := parts || CASE WHEN jsonb_typeof(v) = 'string' THEN v ->> 0 ELSE v::text END;
    END LOOP;
    RETURN array_to_string(parts, ':');
END $$;

-- skiplock_enqueue stores one job and answers its id; duplicate is true when
-- its idempotency key matched a job that holds it, whose id it answers.
-- Nothing is stored when it raises. See docs/sql.md.
CREATE FUNCTION skiplock_enqueue(kind text, payload jsonb DEFAULT '{}', opts jsonb DEFAULT '{}',
    OUT id bigint, OUT duplicate boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    j_kind  text := skiplock_enqueue.kind;
    j_data  jsonb := coalesce(skiplock_enqueue.payload, '{}');
    o       jsonb := coalesce(skiplock_enqueue.opts, '{}');
    known   text[] := ARRAY['op', 'queue', 'tenant', 'priority', 'run_at', 'delay_seconds', 'max_retries',
                            'idempotency_key', 'workflow_id', 'stage', 'tags', 'metadata'];
    bad     text;
    c_version integer;
    c_strict boolean;
    c_kinds jsonb;
    c_defaults jsonb;
    k       jsonb;
    j_op    text;
    j_queue text;
    j_tenant text;
    j_key   text;
    j_prio  integer;
    j_retries integer;
    j_run   timestamptz;
    j_tags  text[] := '{}';
    j_meta  jsonb := '{}';
    policy  text := 'active';
    window_secs float8;
    delay   numeric;
    taken   bigint;
BEGIN
    -- The plain fields, as the library's job spec.
    IF j_kind IS NULL OR j_kind = '' THEN
        PERFORM skiplock_enqueue_refuse('kind', 'is required');
    END IF;
    IF octet_length(j_kind) > 200 THEN
        PERFORM skiplock_enqueue_refuse('kind', format('must be at most 200 bytes, got %s', octet_length(j_kind)));
    END IF;
    IF jsonb_typeof(j_data) = 'null' THEN
        j_data := '{}';
    ELSIF jsonb_typeof(j_data) <> 'object' THEN
        PERFORM skiplock_enqueue_refuse('payload', 'must be a JSON object');
    END IF;
    IF octet_length(j_data::text) > 1048576 THEN
        PERFORM skiplock_enqueue_refuse('payload', format('is %s bytes, over the limit of 1048576', octet_length(j_data::text)));
    END IF;
    PERFORM skiplock_enqueue_json('payload', j_data);
    IF jsonb_typeof(o) <> 'object' THEN
        PERFORM skiplock_enqueue_refuse('opts', 'must be a JSON object');
    END IF;
    SELECT key INTO bad FROM jsonb_object_keys(o) AS key WHERE key <> ALL (known) ORDER BY key LIMIT 1;
    IF bad IS NOT NULL THEN
        PERFORM skiplock_enqueue_refuse(bad, 'is not an option of skiplock_enqueue (options: '
            || array_to_string(known, ', ') || ')');
    END IF;
    j_op := skiplock_enqueue_text(o, 'op', 200);
    j_queue := skiplock_enqueue_text(o, 'queue', 200);
    j_tenant := skiplock_enqueue_text(o, 'tenant', 200);
    j_key := skiplock_enqueue_text(o, 'idempotency_key', 500);
    j_prio := skiplock_enqueue_int(o, 'priority', 0, 10);
    j_retries := skiplock_enqueue_int(o, 'max_retries', 0, 1000000);
    IF o ? 'run_at' AND o -> 'run_at' <> 'null' THEN
        IF o ? 'delay_seconds' AND o -> 'delay_seconds' <> 'null' THEN
            PERFORM skiplock_enqueue_refuse('delay_seconds', 'set run_at or delay_seconds, not both');
        END IF;
        IF jsonb_typeof(o -> 'run_at') <> 'string' OR o ->> 'run_at' !~
            '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$' THEN
            PERFORM skiplock_enqueue_refuse('run_at', format('must be an RFC 3339 timestamp from 1970 to 9999 in UTC, got %s',
                left((o -> 'run_at')::text, 40)));
        END IF;
        j_run := (o ->> 'run_at')::timestamptz;
        IF j_run < '1970-01-01T00:00:00Z' OR j_run > '9999-12-31T23:59:59.999999Z' THEN
            PERFORM skiplock_enqueue_refuse('run_at', format('must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z in UTC, got %s',
                o ->> 'run_at'));
        END IF;
    ELSIF o ? 'delay_seconds' AND o -> 'delay_seconds' <> 'null' THEN
        IF jsonb_typeof(o -> 'delay_seconds') <> 'number' THEN
            PERFORM skiplock_enqueue_refuse('delay_seconds', 'must be a number, got JSON ' || jsonb_typeof(o -> 'delay_seconds'));
        END IF;
        delay := (o ->> 'delay_seconds')::numeric;
        IF delay < 0 OR delay > 316224000 THEN
            PERFORM skiplock_enqueue_refuse('delay_seconds', format('must be between 0 and 316224000 seconds (3660 days), got %s', delay));
        END IF;
        IF delay > 0 THEN
            j_run := now() + make_interval(secs => delay::float8);
        END IF;
    END IF;
    IF o ? 'tags' AND o -> 'tags' <> 'null' THEN
        IF jsonb_typeof(o -> 'tags') <> 'array' THEN
            PERFORM skiplock_enqueue_refuse('tags', 'must be an array of strings, got JSON ' || jsonb_typeof(o -> 'tags'));
        END IF;
        IF jsonb_array_length(o -> 'tags') > 100 THEN
            PERFORM skiplock_enqueue_refuse('tags', format('must have at most 100 tags, got %s', jsonb_array_length(o -> 'tags')));
        END IF;
        FOR i IN 0 .. jsonb_array_length(o -> 'tags') - 1 LOOP
            j_tags := j_tags || skiplock_enqueue_text(jsonb_build_object(format('tags[%s]', i), o -> 'tags' -> i), format('tags[%s]', i), 200);
        END LOOP;
    END IF;
    IF o ? 'metadata' AND o -> 'metadata' <> 'null' THEN
        j_meta := o -> 'metadata';
        PERFORM skiplock_enqueue_json('metadata', j_meta);
    END IF;

    -- The contract set in force: the newest stored version.
    SELECT version, strict, kinds, defaults INTO c_version, c_strict, c_kinds, c_defaults
    FROM skiplock_contracts ORDER BY version DESC LIMIT 1;
    IF FOUND THEN
        IF c_defaults IS NULL THEN
            PERFORM skiplock_enqueue_refuse('kind', format('contracts version %s was applied before skiplock_enqueue '
                'could read it: apply the contract set again (skiplock contracts apply)', c_version));
        END IF;
        k := c_kinds -> j_kind;
        IF k IS NULL AND c_strict THEN
            PERFORM skiplock_enqueue_refuse('kind', format('unknown kind %s (strict mode)', to_jsonb(j_kind)));
        END IF;
        IF coalesce((k ->> 'payload_schema')::boolean, false) AND NOT coalesce((k ->> 'sql_enqueue')::boolean, false) THEN
            PERFORM skiplock_enqueue_refuse('kind', format('kind %s checks its payload against a JSON Schema, which '
                'skiplock_enqueue does not: its contract must allow it (sql_enqueue: true)', to_jsonb(j_kind)));
        END IF;
    END IF;
    IF k IS NOT NULL THEN
        IF jsonb_array_length(k -> 'ops') = 0 AND j_op <> '' THEN
            PERFORM skiplock_enqueue_refuse('op', format('kind %s takes no op, got %s', to_jsonb(j_kind), to_jsonb(j_op)));
        ELSIF jsonb_array_length(k -> 'ops') > 0 AND j_op = '' THEN
            PERFORM skiplock_enqueue_refuse('op', format('required for kind %s (allowed: %s)', to_jsonb(j_kind),
                (SELECT string_agg(x, ', ') FROM jsonb_array_elements_text(k -> 'ops') x)));
        ELSIF jsonb_array_length(k -> 'ops') > 0 AND NOT k -> 'ops' ? j_op THEN
            PERFORM skiplock_enqueue_refuse('op', format('%s is not allowed for kind %s (allowed: %s)', to_jsonb(j_op),
                to_jsonb(j_kind), (SELECT string_agg(x, ', ') FROM jsonb_array_elements_text(k -> 'ops') x)));
        END IF;
    ELSE
        k := coalesce(c_defaults, '{"queue": "default", "priority": 5, "max_retries": 3}');
    END IF;
    j_queue := coalesce(nullif(j_queue, ''), k ->> 'queue');
    j_prio := coalesce(j_prio, (k ->> 'priority')::integer);
    j_retries := coalesce(j_retries, (k ->> 'max_retries')::integer);

    -- The idempotency key: the caller's, else derived by the kind's unique.
    IF jsonb_typeof(k -> 'unique') = 'object' THEN
        IF j_key = '' THEN
            j_key := j_kind || ':' || skiplock_enqueue_refs(k -> 'unique' -> 'scope', j_kind, j_tenant, j_queue, j_op, j_data)
                || ':' || left(encode(sha256(convert_to(
                    skiplock_enqueue_refs(k -> 'unique' -> 'fields', j_kind, j_tenant, j_queue, j_op, j_data), 'UTF8')), 'hex'), 16);
        END IF;
        policy := k -> 'unique' ->> 'policy';
        window_secs := (k ->> 'window_seconds')::float8;
    END IF;

    -- The insert, as the library's: a key under policy window is taken in
    -- skiplock_unique_keys for the window; under policy active the live job
    -- holding it is answered.
    duplicate := false;
    IF j_key <> '' AND policy = 'window' THEN
        INSERT INTO skiplock_unique_keys AS u (tenant, key, job_id, expires_at)
        VALUES (j_tenant, j_key, nextval('skiplock_jobs_id_seq'), now() + make_interval(secs => window_secs))
        ON CONFLICT (tenant, key) DO UPDATE SET job_id = EXCLUDED.job_id, expires_at = EXCLUDED.expires_at
            WHERE u.expires_at <= now()
        RETURNING job_id INTO taken;
        IF taken IS NULL THEN
            SELECT job_id INTO id FROM skiplock_unique_keys WHERE tenant = j_tenant AND key = j_key;
            duplicate := true;
            RETURN;
        END IF;
    END IF;
    FOR try IN 1 .. 5 LOOP
        INSERT INTO skiplock_jobs (id, kind, op, queue, tenant, state, priority, payload, metadata, tags,
            max_retries, run_at, idempotency_key, workflow_id, stage)
        VALUES (coalesce(taken, nextval('skiplock_jobs_id_seq')), j_kind, nullif(j_op, ''), j_queue, j_tenant,
            CASE WHEN coalesce(j_run, now()) > now() THEN 'scheduled' ELSE 'pending' END,
            j_prio, j_data, j_meta, j_tags, j_retries, coalesce(j_run, now()), nullif(j_key, ''),
            nullif(skiplock_enqueue_text(o, 'workflow_id', 500), ''), nullif(skiplock_enqueue_text(o, 'stage', 200), ''))
        ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
        RETURNING skiplock_jobs.id INTO id;
        IF id IS NOT NULL THEN
            PERFORM pg_notify('skiplock_insert_' || left(current_schema(), 40), j_queue);
            RETURN;
        END IF;
        -- The key is live; its holder may finish before it is read: try again.
        SELECT j.id INTO id FROM skiplock_jobs j WHERE j.tenant = j_tenant AND j.idempotency_key = j_key;
        IF id IS NOT NULL THEN
            duplicate := true;
            RETURN;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'idempotency key % kept changing hands', j_key;
END $$;

-- Pin every function's search_path to the schema the tables were made in
-- (pg_temp last, so that no temporary table can stand in for one of them).
DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['skiplock_enqueue_refuse(text, text)', 'skiplock_enqueue_json(text, jsonb)',
        'skiplock_enqueue_text(jsonb, text, integer)', 'skiplock_enqueue_int(jsonb, text, integer, integer)',
        'skiplock_enqueue_refs(jsonb, text, text, text, text, jsonb)', 'skiplock_enqueue(text, jsonb, jsonb)'] LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
    END LOOP;
END $$;
