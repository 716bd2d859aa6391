package pgdriver

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skiplock/skiplock/driver"
)

// SQLSTATEs of the refusals ClassifyError recognises.
const (
	// read_only_sql_transaction: default_transaction_read_only, a
	// read-only transaction, or a hot standby ("during recovery").
	codeReadOnly = "25006"
	codeDiskFull = "53100" // disk_full
)

// ClassifyError answers a *driver.RefusedError (driver.ErrReadOnly,
// driver.ErrDiskFull) for a write PostgreSQL refused, and err otherwise.
func (d *Driver) ClassifyError(err error) error { return classifyError(err) }

func classifyError(err error) error {
	var pgErr *pgconn.PgError
	var refused *driver.RefusedError
	if err == nil || errors.As(err, &refused) || !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case codeReadOnly:
		return &driver.RefusedError{Kind: driver.ErrReadOnly, Err: err}
	case codeDiskFull:
		return &driver.RefusedError{Kind: driver.ErrDiskFull, Err: err}
	}
	return err
}

var _ driver.ErrorClassifier = (*Driver)(nil)
