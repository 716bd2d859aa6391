// Package skiplocksql inserts Skiplock jobs inside a database/sql
// transaction (SQLite: begun on the driver's DB()) with the transaction's
// type checked at compile time. Client.InsertTx takes any transaction and
// finds a wrong one only when it runs.
package skiplocksql

import (
	"context"
	"database/sql"

	"github.com/skiplock/skiplock"
)

// InsertTx is client.InsertTx for a SQLite client: the job exists only if
// tx commits.
func InsertTx[T skiplock.JobArgs](ctx context.Context, client *skiplock.Client, tx *sql.Tx, args T, opts *skiplock.InsertOpts) (*skiplock.InsertResult, error) {
	return client.InsertTx(ctx, tx, args, opts)
}

// InsertManyTx is client.InsertManyTx for a SQLite client.
func InsertManyTx(ctx context.Context, client *skiplock.Client, tx *sql.Tx, jobs []skiplock.InsertManyParams) ([]int64, error) {
	return client.InsertManyTx(ctx, tx, jobs)
}
