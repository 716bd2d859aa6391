// Package vault keeps finished Skiplock jobs as Apache Parquet files in a
// Hive layout, in a local directory or an S3-compatible object store:
//
//	jobs/date=YYYY-MM-DD/hour=HH/part-*.parquet     one row per job
//	metrics/date=YYYY-MM-DD/hour=HH/part-*.parquet  one row per queue
//	_manifest.json                                  the parts the vault holds
//
// A *Vault is a skiplock.Vault: set it as Config.Vault and retention stores
// the jobs it is about to delete here first. Export copies finished jobs
// from a database on demand; Parts and Query read the vault back.
//
// Every file is written whole or not at all (a temporary file renamed, an
// upload completed), and the manifest records a part before its files are
// written and marks it done after, so that a writer killed at any point
// leaves the vault holding each job once: a rerun keeps the part whose
// files made it, drops the one whose files did not, and stores only the
// jobs it does not hold. One writer at a time per vault.
package vault
