CREATE OR REPLACE FUNCTION skiplock_flow_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE skiplock_flow_slots SET job_id = NULL, taken_at = NULL WHERE job_id = OLD.id;
    RETURN NULL;
END
$$;

-- The spill tables' copies of the key indexes, whoever made them.
DO $$
DECLARE
    i regclass;
BEGIN
    FOR i IN SELECT x.indexrelid::regclass FROM pg_inherits h JOIN pg_index x ON x.indrelid = h.inhrelid
             WHERE h.inhparent = 'skiplock_jobs'::regclass
               AND pg_get_expr(x.indpred, x.indrelid) IN ('(concurrency_key IS NOT NULL)', '(rate_key IS NOT NULL)') LOOP
        EXECUTE format('DROP INDEX %s', i);
    END LOOP;
END $$;
DROP INDEX skiplock_jobs_rate_key;
DROP INDEX skiplock_jobs_concurrency_key;
