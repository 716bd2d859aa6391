package sqlitedriver_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/dbopen"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

func TestOpenRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database at all ", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "ro.db")
	sqlitetest.Open(t, readOnly)
	if err := os.Chmod(readOnly, 0o444); err != nil {
		t.Fatal(err)
	}
	roDir := filepath.Join(dir, "rodir")
	if err := os.Mkdir(roDir, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, want string }{
		{"missing directory", filepath.Join(dir, "nope", "x.db"), "directory " + filepath.Join(dir, "nope") + " does not exist"},
		{"directory", dir, "is a directory"},
		{"not sqlite", garbage, "not a SQLite database"},
		{"read-only file", readOnly, "read-only"},
		{"read-only directory", filepath.Join(roDir, "x.db"), "read-only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := sqlitedriver.Open(t.Context(), c.path)
			if err == nil {
				d.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, sqlitedriver.ErrUnusable) || !strings.Contains(err.Error(), c.want) ||
				!strings.Contains(err.Error(), c.path) {
				t.Fatalf("error %q, want one naming %s and saying %q", err, c.path, c.want)
			}
			_, err = dbopen.Open(t.Context(), "sqlite:"+c.path)
			if !errors.Is(err, dbopen.ErrBadDatabase) {
				t.Fatalf("dbopen: %v, want ErrBadDatabase", err)
			}
		})
	}
}

func TestDBOpenMigratesNewFilesOnly(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	for _, url := range []string{"sqlite://" + filepath.Join(dir, "a.db"), "sqlite:" + filepath.Join(dir, "b.db"),
		filepath.Join(dir, "c.db")} {
		o, err := dbopen.Open(ctx, url)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if _, err := o.Driver.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "a", Queue: "default"}}); err != nil {
			t.Fatalf("%s: insert on a new file: %v", url, err)
		}
		o.Close()
	}
	// Reverted stays reverted: opening does not migrate a Skiplock file.
	o, err := dbopen.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Driver.Migrator().Down(ctx, 1); err != nil {
		t.Fatal(err)
	}
	o.Close()
	o, err = dbopen.Open(ctx, filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := o.Driver.Migrator().Status(ctx)
	o.Close()
	if err != nil || st[len(st)-1].Applied != nil {
		t.Fatalf("status after down and open: %+v, %v", st, err)
	}
	// Another application's file is not a Skiplock database.
	other := filepath.Join(dir, "app.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = dbopen.Open(ctx, other)
	if !errors.Is(err, dbopen.ErrBadDatabase) || !strings.Contains(err.Error(), "not a Skiplock database") ||
		!strings.Contains(err.Error(), other) {
		t.Fatalf("open another app's file: %v", err)
	}
}

func TestDriversOnOneFileWakeEachOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.db")
	a, b := sqlitetest.Open(t, path), sqlitetest.Open(t, path)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	heard := make(chan string, 10)
	go func() { _ = a.Notifier().Listen(ctx, func(q string) { heard <- q }, func(int64) {}) }()
	for {
		if err := b.QueueNotify(ctx, []string{"media"}); err != nil {
			t.Fatal(err)
		}
		select {
		case q := <-heard:
			if q == "" {
				continue // listening: every queue may have work
			}
			if q != "media" {
				t.Fatalf("heard %q", q)
			}
			return
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("driver a never heard driver b")
		}
	}
}

func TestInsertInCallersTransaction(t *testing.T) {
	d := sqlitetest.New(t)
	ctx := t.Context()
	for _, commit := range []bool{false, true} {
		tx, err := d.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		exec, err := d.UnwrapTx(tx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := exec.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "a", Queue: "default", IdempotencyKey: "k",
			UniquePolicy: "active"}})
		if err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.JobGet(ctx, res[0].Job.ID)
		if commit != (err == nil) {
			t.Fatalf("commit %v: JobGet: %v", commit, err)
		}
	}
	if _, err := d.UnwrapTx("nope"); err == nil {
		t.Fatal("UnwrapTx took a string")
	}
}

// SQLITE_FULL (a full disk, or max_page_count reached) maps to
// driver.ErrDiskFull, SQLITE_READONLY to driver.ErrReadOnly.
func TestRefusalCodes(t *testing.T) {
	t.Parallel()
	d := sqlitetest.New(t)
	ctx := context.Background()
	sqlitetest.SetMaxPages(t, d, 0)
	var err error
	for i := 0; err == nil && i < 1000; i++ {
		_, err = d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "x", Queue: "default", Payload: []byte(`{"pad":"` + strings.Repeat("x", 8000) + `"}`)}})
	}
	if err = d.ClassifyError(err); !errors.Is(err, driver.ErrDiskFull) || errors.Is(err, driver.ErrReadOnly) {
		t.Fatalf("insert into a full file: %v", err)
	}
	sqlitetest.SetMaxPages(t, d, 1<<30)
	sqlitetest.SetReadOnly(t, d, true)
	_, err = d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "x", Queue: "default", Payload: []byte(`{}`)}})
	if err = d.ClassifyError(err); !errors.Is(err, driver.ErrReadOnly) {
		t.Fatalf("insert into a query-only database: %v", err)
	}
	if err := d.ClassifyError(driver.ErrNotFound); err != driver.ErrNotFound {
		t.Fatalf("other errors pass unchanged: %v", err)
	}
}

// Another process holding the write lock past the busy timeout does not fail
// an Open: it waits as long as its context allows.
func TestOpenWaitsOutABusyWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "busy.db")
	sqlitetest.Open(t, path)
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(sqlitedriver.BusyTimeout*time.Millisecond + time.Second)
		_, _ = conn.ExecContext(context.Background(), "COMMIT")
	}()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	d, err := sqlitedriver.Open(ctx, path)
	<-released
	if err != nil {
		t.Fatalf("open while another connection held the write lock past the busy timeout: %v", err)
	}
	d.Close()
}

// A file with every migration applied migrates at once while another
// connection holds the write lock: there is nothing to apply, so nothing to
// wait for. A client opening beside busy writers would otherwise fail with
// SQLITE_BUSY after the busy timeout.
func TestMigratedFileMigratesBesideABusyWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "busy.db")
	sqlitetest.Open(t, path)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	d, err := sqlitedriver.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), "ROLLBACK") }()
	done, err := d.Migrator().Up(ctx, 0)
	if err != nil || len(done) != 0 {
		t.Fatalf("up with every migration applied, beside a held write lock: %v, applied %v", err, done)
	}
	st, err := d.Migrator().Status(ctx)
	if err != nil {
		t.Fatalf("status beside a held write lock: %v", err)
	}
	for _, m := range st {
		if m.Applied == nil {
			t.Fatalf("migration %03d_%s not applied", m.Version, m.Name)
		}
	}
	if len(st) == 0 {
		t.Fatal("status lists no migration")
	}
}
