package pgdriver

// Query answers a statement of queries.sql, expanded, for tests that look
// at its plan.
func Query(name string) string { return q(name) }

// GenericPlan is the settings the claim and the completion run under.
const GenericPlan = genericPlan

// QueryNames answers the name of every statement of queries.sql.
func QueryNames() []string { return queries.Names() }
