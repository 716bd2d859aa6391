// Package skiplockpgx inserts Skiplock jobs inside a pgx transaction with
// the transaction's type checked at compile time. Client.InsertTx takes
// any transaction and finds a wrong one only when it runs.
package skiplockpgx

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock"
)

// InsertTx is client.InsertTx for a PostgreSQL client: the job exists only
// if tx commits.
func InsertTx[T skiplock.JobArgs](ctx context.Context, client *skiplock.Client, tx pgx.Tx, args T, opts *skiplock.InsertOpts) (*skiplock.InsertResult, error) {
	return client.InsertTx(ctx, tx, args, opts)
}

// InsertManyTx is client.InsertManyTx for a PostgreSQL client.
func InsertManyTx(ctx context.Context, client *skiplock.Client, tx pgx.Tx, jobs []skiplock.InsertManyParams) ([]int64, error) {
	return client.InsertManyTx(ctx, tx, jobs)
}
