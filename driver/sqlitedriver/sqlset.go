package sqlitedriver

import (
	"database/sql"
	_ "embed"
	"slices"
	"strings"

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

// queries are the driver's statements, expanded once at start-up.
var queries = sqlset.MustParse("sqlitedriver", queriesSQL+"\n"+retentionSQL+"\n"+flowSQL+"\n"+fairSQL+"\n"+bulkSQL+"\n"+historySQL, sqlset.JobColumns)

func q(name string) string { return queries.Get(name) }

// checkArgs, on in the driver's tests, checks the arguments of every call
// against the names its statement uses (sqlset.CheckArgs): SQLite binds a
// name no argument gives as NULL and ignores an argument no name uses.
var checkArgs bool

// named answers args, the arguments of a call of the statement called
// name, checked when checkArgs is on.
func named(name string, args ...any) []any {
	if checkArgs {
		if err := queries.CheckArgs(name, args); err != nil {
			panic(err)
		}
	}
	return args
}

// jobListByKey is JobList with its key filter a plain term. SQLite plans a
// statement once for every binding, so a term that also lets every job
// through when no key is given never reaches the key index, and a search
// by key would read the whole archive.
var jobListByKey = func() string {
	const anyKey, byKey = "(@idempotency_key = '' OR idempotency_key = @idempotency_key)", "idempotency_key = @idempotency_key"
	s := q("JobList")
	if strings.Count(s, anyKey) != 5 {
		panic("sqlitedriver: JobList's key filter is not " + anyKey)
	}
	return strings.ReplaceAll(s, anyKey, byKey)
}()

// only answers those of args, named, that the statement called name uses:
// for calls that hand one set of arguments to several statements.
func only(name string, args ...any) []any {
	params := queries.Params(name)
	out := make([]any, 0, len(args))
	for _, a := range args {
		if na, ok := a.(sql.NamedArg); !ok || slices.Contains(params, na.Name) {
			out = append(out, a)
		}
	}
	return out
}
