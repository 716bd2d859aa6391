package driver

// JobColumns are the columns of the job tables (live and archived) in the
// order every driver reads them: the one declaration of the job record's
// columns. A driver derives from it its statements' column lists ({{cols}}
// in package sqlset), its row scanner (a target per column, checked when
// the driver loads) and, on PostgreSQL, the column order of COPY. A new
// column is added here, to both drivers' migrations and to the drivers'
// targets, and to Job; a driver that misses it fails at load.
var JobColumns = []string{"id", "kind", "op", "queue", "tenant", "state", "priority", "payload", "metadata",
	"tags", "attempt", "max_retries", "run_at", "created_at", "started_at", "finished_at", "updated_at",
	"lease_until", "worker_id", "heartbeat_at", "progress", "progress_message", "checkpoint", "result",
	"errors", "idempotency_key", "depends_on", "workflow_id", "stage", "cancel_requested",
	"run_on_parent_failure", "attempt_base"}
