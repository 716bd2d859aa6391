package skiplock

import "context"

// Vault keeps finished jobs outside the database. With Config.Vault set,
// retention stores the jobs it is about to delete in the vault first and
// deletes only what the vault accepted; package vault writes Apache Parquet
// files to a directory or an S3-compatible store.
type Vault interface {
	// Store writes jobs durably and returns only once they are safe (files
	// renamed, uploads completed, the manifest of stored ids written). It
	// is idempotent by job version, a job's id and finish time: a version
	// the vault holds already is not written again, so a run repeated after
	// a crash duplicates nothing, while a job retried and finished again
	// since it was stored is written again. It answers how many jobs it
	// wrote (the others it held already).
	Store(ctx context.Context, jobs []*JobRow) (int, error)
}
