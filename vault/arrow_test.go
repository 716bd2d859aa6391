package vault

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/skiplock/skiplock"
)

// Columns that hold JSON text, and UTC timestamps.
var (
	jsonColumns = []string{"payload", "metadata", "checkpoint", "result", "errors"}
	timeColumns = []string{"run_at", "created_at", "started_at", "finished_at", "updated_at", "lease_until", "heartbeat_at"}
)

// TestFilesReadByArrow opens the jobs files with Apache Arrow's Parquet
// reader, a second implementation, and checks that their columns are the
// fields of skiplock.JobView, timestamps UTC in microseconds, and that every
// cell of every row equals the job's API view.
func TestFilesReadByArrow(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db database) {
		jobs := finishJobs(t, db.client, 80)
		v, dir := openDir(t)
		if _, err := v.Store(context.Background(), jobs); err != nil {
			t.Fatal(err)
		}
		want := map[int64]map[string]any{}
		for _, j := range jobs {
			var m map[string]any
			if err := json.Unmarshal([]byte(viewJSON(t, atMicros(j))), &m); err != nil {
				t.Fatal(err)
			}
			want[j.ID] = m
		}
		files, _ := filepath.Glob(filepath.Join(dir, "jobs", "date=*", "hour=*", "*.parquet"))
		seen := 0
		for _, f := range files {
			for _, row := range readWithArrow(t, f) {
				id := int64(row["id"].(float64))
				w := want[id]
				if w == nil {
					t.Fatalf("%s: job %d was not stored", f, id)
				}
				compareRow(t, id, row, w)
				seen++
			}
		}
		if seen != len(jobs) {
			t.Fatalf("arrow read %d rows, want %d", seen, len(jobs))
		}
	})
}

// readWithArrow answers the rows of a Parquet file, each cell as JSON
// would decode it, times as time.Time; it checks the schema on the way.
func readWithArrow(t *testing.T, path string) []map[string]any {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name)
		if slices.Contains(timeColumns, f.Name) {
			ts, ok := f.Type.(*arrow.TimestampType)
			if !ok || ts.Unit != arrow.Microsecond || ts.TimeZone != "UTC" {
				t.Fatalf("column %s is %s, want timestamp[us, tz=UTC]", f.Name, f.Type)
			}
		}
	}
	if want := append(jobViewFields(), "run_on_parent_failure", "attempt_base"); !slices.Equal(names, want) {
		t.Fatalf("columns\n got %v\nwant %v (the fields of skiplock.JobView, then the two a restore needs)", names, want)
	}
	var rows []map[string]any
	tr := array.NewTableReader(tbl, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := range int(rec.NumRows()) {
			row := map[string]any{}
			for c, col := range rec.Columns() {
				row[names[c]] = cell(t, col, i)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func jobViewFields() []string {
	var out []string
	rt := reflect.TypeOf(skiplock.JobView{})
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// cell answers one value of an Arrow array as encoding/json decodes it
// (numbers float64, lists []any), a timestamp as time.Time.
func cell(t *testing.T, arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Int64:
		return float64(a.Value(i))
	case *array.Int32:
		return float64(a.Value(i))
	case *array.String:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Timestamp:
		return a.Value(i).ToTime(arrow.Microsecond)
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := []any{}
		for k := start; k < end; k++ {
			out = append(out, cell(t, a.ListValues(), int(k)))
		}
		return out
	}
	t.Fatalf("unexpected arrow type %s", arr.DataType())
	return nil
}

func compareRow(t *testing.T, id int64, got, want map[string]any) {
	t.Helper()
	for name, w := range want {
		g := got[name]
		switch {
		case slices.Contains(jsonColumns, name):
			var decoded any
			if g != nil {
				if err := json.Unmarshal([]byte(g.(string)), &decoded); err != nil {
					t.Fatalf("job %d: %s is not JSON text: %v", id, name, err)
				}
			}
			g = decoded
		case slices.Contains(timeColumns, name) && w != nil:
			wt, err := time.Parse(time.RFC3339Nano, w.(string))
			if err != nil {
				t.Fatal(err)
			}
			gt, ok := g.(time.Time)
			if !ok || !gt.Equal(wt) || gt.Location() != time.UTC {
				t.Fatalf("job %d: %s = %v, want %v UTC", id, name, g, wt)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("job %d: %s = %#v, want %#v", id, name, g, w)
		}
	}
}
