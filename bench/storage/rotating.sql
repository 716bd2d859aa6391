-- Three slot tables in rotation: inserts go to the current slot; a slot
-- that is not current and holds no live row is truncated (rotate.sql).
DROP SCHEMA IF EXISTS hotproto CASCADE;
CREATE SCHEMA hotproto;
CREATE TABLE hotproto.q (
    slot int NOT NULL,
    id bigserial,
    state smallint NOT NULL DEFAULT 0,
    payload jsonb NOT NULL DEFAULT '{}',
    locked_at timestamptz
) PARTITION BY LIST (slot);
CREATE TABLE hotproto.q_0 PARTITION OF hotproto.q FOR VALUES IN (0) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_cost_delay = 0);
CREATE TABLE hotproto.q_1 PARTITION OF hotproto.q FOR VALUES IN (1) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_cost_delay = 0);
CREATE TABLE hotproto.q_2 PARTITION OF hotproto.q FOR VALUES IN (2) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_cost_delay = 0);
CREATE INDEX q_ready ON hotproto.q (id) WHERE state = 0;
CREATE INDEX q_running ON hotproto.q (id) WHERE state = 1;
CREATE TABLE hotproto.cur (slot int NOT NULL);
INSERT INTO hotproto.cur VALUES (0);
CREATE VIEW hotproto.sizes AS
    SELECT pg_total_relation_size('hotproto.q_0') + pg_total_relation_size('hotproto.q_1')
         + pg_total_relation_size('hotproto.q_2') + pg_total_relation_size('hotproto.cur') AS bytes,
           (SELECT sum(n_tup_del) FROM pg_stat_user_tables WHERE relid IN
               ('hotproto.q_0'::regclass, 'hotproto.q_1'::regclass, 'hotproto.q_2'::regclass)) AS done;
-- rotate truncates each drained slot but the current one, under a lock
-- that keeps inserts out while it looks, then moves inserts on to the
-- next slot if that one is empty. A slot a transaction holds a lock on
-- is skipped (lock_timeout) until it lets go.
CREATE FUNCTION hotproto.rotate() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    c int;
    s int;
BEGIN
    SELECT slot INTO c FROM hotproto.cur;
    FOR s IN SELECT x FROM generate_series(0, 2) x WHERE x <> c LOOP
        BEGIN
            EXECUTE format('LOCK TABLE hotproto.q_%s IN ACCESS EXCLUSIVE MODE', s);
            IF NOT EXISTS (SELECT 1 FROM hotproto.q WHERE slot = s) THEN
                EXECUTE format('TRUNCATE hotproto.q_%s', s);
            END IF;
        EXCEPTION WHEN lock_not_available THEN
            NULL;
        END;
    END LOOP;
    IF NOT EXISTS (SELECT 1 FROM hotproto.q WHERE slot = (c + 1) % 3) THEN
        UPDATE hotproto.cur SET slot = (c + 1) % 3;
    END IF;
END $$;
