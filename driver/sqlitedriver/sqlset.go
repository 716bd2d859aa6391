package sqlitedriver

import (
	_ "embed"

	"github.com/skiplock/skiplock/driver/sqlset"
)

//go:embed queries.sql
var queriesSQL string

// queries are the driver's statements, expanded once at start-up.
var queries = sqlset.MustParse("sqlitedriver", queriesSQL, sqlset.JobColumns)

func q(name string) string { return queries.Get(name) }
