-- Spill tables' jobs go back to the hot table before the spill tables go.
DO $$
DECLARE
    s text;
BEGIN
    UPDATE skiplock_hot_spill SET target = false WHERE target;
    FOR s IN SELECT name FROM skiplock_hot_spill ORDER BY name LOOP
        EXECUTE format('INSERT INTO skiplock_jobs SELECT * FROM ONLY %I', s);
        EXECUTE format('DROP TABLE %I', s);
    END LOOP;
END $$;
DROP FUNCTION skiplock_hot_spill_empty(text, boolean, integer);
DROP FUNCTION skiplock_hot_spill_open(integer);
DROP SEQUENCE skiplock_hot_spill_seq;
DROP TABLE skiplock_hot_spill;
