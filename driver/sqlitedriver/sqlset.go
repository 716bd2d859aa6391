package sqlitedriver

import (
	_ "embed"

	"github.com/skiplock/skiplock/driver/sqlset"
)

//go:embed queries.sql
var queriesSQL string

// retentionSQL holds the janitor's statements.
//
//go:embed retention.sql
var retentionSQL string

// queries are the driver's statements, expanded once at start-up.
var queries = sqlset.MustParse("sqlitedriver", queriesSQL+"\n"+retentionSQL, sqlset.JobColumns)

func q(name string) string { return queries.Get(name) }
