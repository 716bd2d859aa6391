package sqlitedriver

import "github.com/skiplock/skiplock/driver"

// Query answers a statement of queries.sql, expanded, for tests that look
// at its plan.
func Query(name string) string { return q(name) }

// JobListArgs are the parameters JobList runs its statement with.
func JobListArgs(p driver.ListParams) ([]any, error) { return jobListArgs(p) }

// The driver's tests check the arguments of every call against the names
// its statement uses.
func init() { checkArgs = true }
