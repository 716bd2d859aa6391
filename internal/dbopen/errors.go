package dbopen

import "errors"

// ErrBadDatabase marks a database that cannot be used as given: a bad path,
// a read-only file, a file that is not a Skiplock database. The CLI answers
// it with exit code 2.
var ErrBadDatabase = errors.New("bad database")

// ErrNoDatabase marks a SQLite file that does not exist, asked for by a
// command that must not create one. It is an ErrBadDatabase too.
var ErrNoDatabase = errors.New("no database")
