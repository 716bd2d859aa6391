-- skiplock_enqueue inserts every job into the hot table again.
DO $do$
DECLARE
    def   text := pg_get_functiondef('skiplock_enqueue(text, jsonb, jsonb)'::regprocedure);
    start int := position($s$    -- A plain job goes to the spill target while there is one (migration$s$ IN def);
    stop  int := position($s$    FOR try IN 1 .. 5 LOOP
        INSERT INTO skiplock_jobs $s$ IN def);
BEGIN
    IF start = 0 OR stop < start THEN
        RAISE EXCEPTION 'skiplock_enqueue is not as migration 026 made it: not changed';
    END IF;
    EXECUTE overlay(def PLACING '' FROM start FOR stop - start);
END $do$;
DROP FUNCTION skiplock_enqueue_spill(text, text, text, text, integer, jsonb, jsonb, text[], integer, timestamptz, text, text);
DROP FUNCTION skiplock_enqueue_spill_target();
