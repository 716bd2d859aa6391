-- One hot table: a claim updates the row, a completion deletes it.
DROP SCHEMA IF EXISTS hotproto CASCADE;
CREATE SCHEMA hotproto;
CREATE TABLE hotproto.q (
    id bigserial PRIMARY KEY,
    state smallint NOT NULL DEFAULT 0,
    payload jsonb NOT NULL DEFAULT '{}',
    locked_at timestamptz
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_cost_delay = 0);
CREATE INDEX q_ready ON hotproto.q (id) WHERE state = 0;
CREATE INDEX q_running ON hotproto.q (id) WHERE state = 1;
CREATE VIEW hotproto.sizes AS
    SELECT pg_total_relation_size('hotproto.q') AS bytes,
           (SELECT n_tup_del FROM pg_stat_user_tables WHERE relid = 'hotproto.q'::regclass) AS done;
