-- Makes a migrated schema a Citus one (Driver.Distribute, `skiplock migrate
-- up --citus`), in one transaction. Jobs and the archive are distributed by
-- queue and co-located, so that a queue's live and finished jobs share a
-- shard and a claim or a completion is one shard's statement. The small
-- tables that statements join with jobs (queues, dependencies, window keys,
-- flow control) are reference tables, copied to every node; the rest
-- (leaders, schedules, tokens, contracts, counters, processes, janitor runs)
-- stay plain tables on the coordinator, which every client connects to. A distributed table's unique keys must hold the distribution column:
-- the primary key becomes (id, queue), and an idempotency key is unique per
-- tenant and queue. The triggers that free a job's concurrency slot go: a
-- shard cannot write another table, so the driver refuses flow keys here.
DROP TRIGGER IF EXISTS skiplock_flow_release_update ON skiplock_jobs;
DROP TRIGGER IF EXISTS skiplock_flow_release_delete ON skiplock_jobs;
-- The DDL below and the shards' creation share this transaction.
SET LOCAL citus.multi_shard_modify_mode = 'sequential';
ALTER TABLE skiplock_jobs DROP CONSTRAINT skiplock_jobs_pkey;
ALTER TABLE skiplock_jobs ADD CONSTRAINT skiplock_jobs_pkey PRIMARY KEY (id, queue);
DROP INDEX skiplock_jobs_idempotency;
CREATE UNIQUE INDEX skiplock_jobs_idempotency ON skiplock_jobs (idempotency_key, tenant, queue) WHERE idempotency_key IS NOT NULL;
SELECT create_reference_table(t) FROM unnest(ARRAY['skiplock_queues', 'skiplock_job_deps', 'skiplock_unique_keys',
    'skiplock_flow_slots', 'skiplock_flow_buckets']) AS t;
SELECT create_distributed_table('skiplock_jobs', 'queue');
SELECT create_distributed_table('skiplock_jobs_archive', 'queue', colocate_with => 'skiplock_jobs');
-- The SQL enqueue function (migration 018) names the old idempotency key in
-- its ON CONFLICT; it takes any conflict instead, as the driver's inserts do
-- (a job's id is new, so only the key can conflict).
DO $$
DECLARE
    f oid;
    def text;
    new_def text;
BEGIN
    SELECT p.oid INTO STRICT f FROM pg_proc p
    WHERE p.proname = 'skiplock_enqueue' AND p.pronamespace = current_schema()::regnamespace;
    def := pg_get_functiondef(f);
    new_def := replace(def, 'ON CONFLICT (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING',
        'ON CONFLICT DO NOTHING');
    IF new_def = def THEN
        RAISE EXCEPTION 'skiplock_enqueue has no ON CONFLICT on the idempotency key to rewrite for Citus';
    END IF;
    EXECUTE new_def;
END
$$;
