package pgdriver_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestFilterIndexesAreOptional: a migrated archive has none of the listing
// filters' indexes (a completion pays no entry in them); AddFilterIndexes
// makes each valid on every partition, again does nothing, a partition made
// afterwards has them; AddPayloadIndex adds the payload's, and
// DropFilterIndexes removes them all.
func TestFilterIndexesAreOptional(t *testing.T) {
	t.Parallel()
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	conn := pgtest.Conn(t, url)
	names := []string{"skiplock_jobs_archive_tags", "skiplock_jobs_archive_metadata", "skiplock_jobs_archive_errors",
		"skiplock_jobs_archive_worker", "skiplock_jobs_archive_created"}
	count := func(valid bool) int {
		t.Helper()
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_index WHERE indexrelid = ANY(
			SELECT to_regclass(n) FROM unnest($1::text[]) n) AND (NOT $2 OR indisvalid)`, names, valid).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(false); n != 0 {
		t.Fatalf("a migrated archive has %d filter indexes, want none", n)
	}
	var built int
	if err := d.AddFilterIndexes(ctx, func(string, string) { built++ }); err != nil {
		t.Fatal(err)
	}
	var parts int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'skiplock_jobs_archive'::regclass`).
		Scan(&parts); err != nil {
		t.Fatal(err)
	}
	if n := count(true); n != len(names) || built != len(names)*parts {
		t.Fatalf("after AddFilterIndexes: %d valid filter indexes (want %d), %d partition indexes built (want %d)",
			n, len(names), built, len(names)*parts)
	}
	built = 0
	if err := d.AddFilterIndexes(ctx, func(string, string) { built++ }); err != nil || built != 0 {
		t.Fatalf("a second AddFilterIndexes built %d partition indexes (%v), want none", built, err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE skiplock_jobs_archive_20300101 PARTITION OF skiplock_jobs_archive
		FOR VALUES FROM ('2030-01-01') TO ('2030-01-02')`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT count(*) FROM pg_index WHERE indrelid = 'skiplock_jobs_archive_20300101'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	n, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	if n < len(names) {
		t.Fatalf("a partition made afterwards has %d indexes, want the %d filter indexes among them", n, len(names))
	}
	// The payload index is made only when asked for, and dropped with the others.
	if err := d.AddPayloadIndex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	names = append(names, "skiplock_jobs_archive_payload")
	if n := count(true); n != len(names) {
		t.Fatalf("after AddPayloadIndex: %d valid filter indexes, want %d", n, len(names))
	}
	if err := d.DropFilterIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(false); n != 0 {
		t.Fatalf("after DropFilterIndexes %d filter indexes are left", n)
	}
}
