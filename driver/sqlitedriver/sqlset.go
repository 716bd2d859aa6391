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
var queries = sqlset.MustParse("sqlitedriver", queriesSQL+"\n"+retentionSQL+"\n"+fairSQL, sqlset.JobColumns)

func q(name string) string { return queries.Get(name) }
