-- The processes sharing the database (each client that started), so that
-- the dashboard and GET /v1/processes list them with their version and
-- start; a client refreshes its row on its elector's tick and deletes it
-- at Stop, and a row left by a process that died goes once it is stale.
-- Times are microseconds since the epoch; queues a JSON array.
CREATE TABLE skiplock_processes (
    id           TEXT    PRIMARY KEY,
    host         TEXT    NOT NULL DEFAULT '',
    pid          INTEGER NOT NULL DEFAULT 0,
    version      TEXT    NOT NULL DEFAULT '',
    queues       TEXT    NOT NULL DEFAULT '[]',
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL
);
