package pgdriver

import (
	_ "embed"
	"time"

	"github.com/skiplock/skiplock/driver/sqlset"
)

//go:embed queries.sql
var queriesSQL string

// retentionSQL holds the janitor's statements; they read and delete the
// archive only, so a live job is never among them. The file starts with
// its first "-- name:" line: text before it would trail the last statement
// of queries.sql.
//
//go:embed retention.sql
var retentionSQL string

// flowSQL holds the statements of flow control (docs/flow-control.md),
// which unlimited jobs never run; it starts with a "-- name:" line too.
//
//go:embed flow.sql
var flowSQL string

// bulkSQL holds the set-based forms of the single actions on jobs
// (bulk.go); it starts with a "-- fragment:" line, which ends the statement
// before it as a "-- name:" line does.
//
//go:embed bulk.sql
var bulkSQL string

// historySQL holds the statements of the history of attempts and depth
// (history.go); it starts with a "-- name:" line too.
//
//go:embed history.sql
var historySQL string

// citusQueriesSQL holds the maintenance statements of a schema distributed
// on Citus (citus.go); it starts with a "-- name:" line too.
//
//go:embed citus_queries.sql
var citusQueriesSQL string

// citusHeldSQL holds the statements of held jobs on a schema distributed on
// Citus (citus_held.go); it starts with a "-- name:" line too.
//
//go:embed citus_held.sql
var citusHeldSQL string

// queries are the driver's statements, expanded once at start-up, their
// @name parameters numbered $1, $2, … so that they prepare and plan as
// written.
var queries = sqlset.MustParse("pgdriver", queriesSQL+"\n"+retentionSQL+"\n"+flowSQL+"\n"+fairSQL+"\n"+bulkSQL+"\n"+historySQL+"\n"+citusQueriesSQL+"\n"+citusHeldSQL,
	sqlset.JobColumns, sqlset.Numbered("$"), sqlset.Table("skiplock_jobs"))

// q answers a statement without parameters (every parameter is named).
func q(name string) string { return queries.Positional(name) }

// bind ties a statement with named parameters to the struct of its
// arguments; a mismatch stops the package at load (see sqlset.Bind).
func bind[A any](name string) sqlset.Stmt[A] { return sqlset.Bind[A](queries, name) }

// bindInto binds a statement that names the table it writes ({{table}}),
// so that a plain job can go to a spill table; one that does not stops the
// package at load.
func bindInto[A any](name string) sqlset.Stmt[A] {
	st := bind[A](name)
	if !st.Writes() {
		panic("pgdriver: " + name + " does not name the table it writes ({{table}})")
	}
	return st
}

// The arguments several statements share.
type (
	idArg struct {
		ID int64 `sql:"id"`
	}
	idsArg struct {
		IDs []int64 `sql:"ids"`
	}
	// heldArgs is driver.HeldJob; its Queue is a parameter of the Citus
	// statements only (citusHeldArgs).
	heldArgs struct {
		ID       int64  `sql:"id"`
		Attempt  int    `sql:"attempt"`
		WorkerID string `sql:"worker_id"`
		Queue    string
	}
	limitArg struct {
		Limit int `sql:"limit"`
	}
	// pageArgs pick up to Limit jobs whose time is at or after Since.
	pageArgs struct {
		Limit int       `sql:"limit"`
		Since time.Time `sql:"since"`
	}
)
