-- The processes sharing the database (each client that started), so that
-- the dashboard and GET /v1/processes list them with their version and
-- start; a client refreshes its row on its elector's tick and deletes it
-- at Stop, and a row left by a process that died goes once it is stale.
CREATE TABLE skiplock_processes (
    id           text        PRIMARY KEY,
    host         text        NOT NULL DEFAULT '',
    pid          integer     NOT NULL DEFAULT 0,
    version      text        NOT NULL DEFAULT '',
    queues       text[]      NOT NULL DEFAULT '{}',
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
