package sqlitedriver

// The driver's tests check the arguments of every call against the names
// its statement uses.
func init() { checkArgs = true }
