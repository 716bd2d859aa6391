package sqlitedriver

import (
	_ "embed"

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

// queries are the driver's statements, expanded once at start-up.
var queries = sqlset.MustParse("sqlitedriver", queriesSQL+"\n"+retentionSQL, sqlset.JobColumns)

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
