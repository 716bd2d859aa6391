package pgdriver

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// filterIndex is one of the archive's optional listing-filter indexes.
type filterIndex struct{ suffix, def string }

// filterIndexes are the indexes that `skiplock migrate filter-indexes`
// adds: listings by tag, metadata, error type, worker or created time then
// read the archive by index instead of newest first. Every completion pays
// an entry in each, so none is made unless asked for.
var filterIndexes = []filterIndex{
	{"tags", "USING gin (tags)"},
	{"metadata", "USING gin (metadata jsonb_path_ops)"},
	{"errors", "USING gin (errors jsonb_path_ops)"},
	{"worker", "(worker_id) WHERE worker_id IS NOT NULL"},
	{"created", "USING brin (created_at) WITH (autosummarize = on)"},
}

// payloadIndex is the archive's index for listing by payload (`skiplock
// migrate filter-indexes --payload`): a payload is most of a job's bytes,
// so AddFilterIndexes leaves it to those who search by payload.
var payloadIndex = filterIndex{"payload", "USING gin (payload jsonb_path_ops)"}

func (f filterIndex) name() string { return "skiplock_jobs_archive_" + f.suffix }

// AddFilterIndexes makes the archive's filter indexes without blocking the
// completions that write it: each is made on the archive alone (ON ONLY,
// invalid and unused until complete), then on each partition with CREATE
// INDEX CONCURRENTLY and attached; it is valid once every partition has
// it. A partition made meanwhile gets it from the archive. Run again after
// an interruption, it picks up where it stopped. built, when set, is told
// of each partition's index as it is attached.
func (d *Driver) AddFilterIndexes(ctx context.Context, built func(index, partition string)) error {
	for _, f := range filterIndexes {
		if err := d.addFilterIndex(ctx, f, built); err != nil {
			return fmt.Errorf("filter index %s: %w", f.name(), err)
		}
	}
	return nil
}

// AddPayloadIndex makes the archive's payload index (payloadIndex) as
// AddFilterIndexes makes the others: a listing by payload (payload @>)
// then reads the archive by it.
func (d *Driver) AddPayloadIndex(ctx context.Context, built func(index, partition string)) error {
	if err := d.addFilterIndex(ctx, payloadIndex, built); err != nil {
		return fmt.Errorf("filter index %s: %w", payloadIndex.name(), err)
	}
	return nil
}

func (d *Driver) addFilterIndex(ctx context.Context, f filterIndex, built func(index, partition string)) error {
	if _, err := d.pool.Exec(ctx, "CREATE INDEX IF NOT EXISTS "+f.name()+" ON ONLY skiplock_jobs_archive "+f.def); err != nil {
		return err
	}
	// A partition made during a pass gets the index as it is made; a few
	// passes see the index valid.
	for range 3 {
		var valid bool
		if err := d.pool.QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`,
			f.name()).Scan(&valid); err != nil {
			return err
		}
		if valid {
			return nil
		}
		missing, err := d.partitionsWithout(ctx, f)
		if err != nil {
			return err
		}
		for _, p := range missing {
			if err := d.indexPartition(ctx, f, p); err != nil {
				return fmt.Errorf("partition %s: %w", p, err)
			}
			if built != nil {
				built(f.name(), p)
			}
		}
	}
	return errors.New("still not valid after 3 passes over the partitions")
}

// partitionsWithout answers the archive's partitions whose index is not
// attached to f's.
func (d *Driver) partitionsWithout(ctx context.Context, f filterIndex) ([]string, error) {
	rows, err := d.pool.Query(ctx, `
SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'skiplock_jobs_archive'::regclass
  AND NOT EXISTS (SELECT 1 FROM pg_inherits ii JOIN pg_index x ON x.indexrelid = ii.inhrelid
                  WHERE ii.inhparent = to_regclass($1) AND x.indrelid = c.oid)
ORDER BY c.relname`, f.name())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// indexPartition makes f's index on one partition concurrently (again,
// when an interrupted build left it invalid) and attaches it.
func (d *Driver) indexPartition(ctx context.Context, f filterIndex, partition string) error {
	child := partition + "_" + f.suffix + "_idx"
	ident := pgx.Identifier{child}.Sanitize()
	var valid *bool
	err := d.pool.QueryRow(ctx, `SELECT (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1))`, child).Scan(&valid)
	if err != nil {
		return err
	}
	if valid != nil && !*valid {
		if _, err := d.pool.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+ident); err != nil {
			return err
		}
	}
	if _, err := d.pool.Exec(ctx, "CREATE INDEX CONCURRENTLY IF NOT EXISTS "+ident+" ON "+
		pgx.Identifier{partition}.Sanitize()+" "+f.def); err != nil {
		return err
	}
	_, err = d.pool.Exec(ctx, "ALTER INDEX "+f.name()+" ATTACH PARTITION "+ident)
	return err
}

// DropFilterIndexes removes the archive's filter indexes (see
// AddFilterIndexes), the payload index too.
func (d *Driver) DropFilterIndexes(ctx context.Context) error {
	for _, f := range append(filterIndexes[:len(filterIndexes):len(filterIndexes)], payloadIndex) {
		if _, err := d.pool.Exec(ctx, "DROP INDEX IF EXISTS "+f.name()); err != nil {
			return fmt.Errorf("drop filter index %s: %w", f.name(), err)
		}
	}
	return nil
}
