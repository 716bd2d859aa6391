package skiplock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// readOnlyDrivers are databases whose writes a test can refuse and allow.
var readOnlyDrivers = []struct {
	name string
	open func(t *testing.T) (driver.Driver, func(readOnly bool))
}{
	{"postgres", func(t *testing.T) (driver.Driver, func(bool)) {
		_, url := pgtest.Schema(t)
		d, sw := pgtest.ReadOnlySwitch(t, url)
		return d, sw.Store
	}},
	{"sqlite", func(t *testing.T) (driver.Driver, func(bool)) {
		d := sqlitetest.New(t)
		return d, func(on bool) { sqlitetest.SetReadOnly(t, d, on) }
	}},
}

// A client started on a database that refuses writes starts (its first
// rescue is refused) and rescues the expired lease once writes pass.
func TestStartPassesARefusedRescue(t *testing.T) {
	t.Parallel()
	for _, db := range readOnlyDrivers {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			drv, setReadOnly := db.open(t)
			admin, _ := skiplock.NewClient(drv, nil)
			res, err := admin.Insert(ctx, sleepArgs{N: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			claimed, err := admin.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "ghost", Max: 1, Lease: time.Second})
			if err != nil || len(claimed) != 1 {
				t.Fatalf("claim: %v %v", claimed, err)
			}
			testwait.Until(t, 5*time.Second, "the lease to expire", func() bool { return time.Now().After(*claimed[0].LeaseUntil) })
			setReadOnly(true)
			client, err := skiplock.NewClient(drv, &skiplock.Config{RescueInterval: 50 * time.Millisecond, LeaderTTL: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if err := client.Start(ctx); err != nil {
				t.Fatalf("start on a read-only database: %v", err)
			}
			t.Cleanup(func() { _ = client.Stop(context.Background()) })
			if h := client.WriteHealth(ctx); !errors.Is(h.Err, skiplock.ErrReadOnly) || h.Since.IsZero() {
				t.Errorf("write health of a read-only database: %+v", h)
			}
			if j, _ := admin.JobGet(ctx, res.Job.ID); j.State != skiplock.StateRunning {
				t.Fatalf("job rescued on a read-only database: %+v", j)
			}
			setReadOnly(false)
			testwait.Until(t, 20*time.Second, "the rescue", func() bool {
				j, err := admin.JobGet(ctx, res.Job.ID)
				return err == nil && j.State == skiplock.StatePending
			})
			testwait.Until(t, 10*time.Second, "healthy writes", func() bool { return client.WriteHealth(ctx).Err == nil })
		})
	}
}

// A refused write wraps ErrReadOnly whatever the call, and the database's
// own error.
func TestRefusedWritesAreTyped(t *testing.T) {
	t.Parallel()
	for _, db := range readOnlyDrivers {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			drv, setReadOnly := db.open(t)
			client, _ := skiplock.NewClient(drv, nil)
			setReadOnly(true)
			_, err := client.Insert(t.Context(), sleepArgs{N: 1}, nil)
			var refused *skiplock.RefusedError
			if !errors.Is(err, skiplock.ErrReadOnly) || errors.Is(err, skiplock.ErrDiskFull) || !errors.As(err, &refused) {
				t.Fatalf("insert on a read-only database: %v", err)
			}
			if _, err := client.JobList(t.Context(), skiplock.JobListParams{}); err != nil {
				t.Fatalf("a read on a read-only database: %v", err)
			}
		})
	}
}

// PostgreSQL's disk_full and read_only_sql_transaction map to the typed
// errors; other codes pass unchanged.
func TestPostgresRefusalCodes(t *testing.T) {
	t.Parallel()
	d := new(pgdriver.Driver)
	for code, want := range map[string]error{"53100": skiplock.ErrDiskFull, "25006": skiplock.ErrReadOnly, "53200": nil, "23505": nil} {
		pgErr := &pgconn.PgError{Code: code, Message: "test"}
		err := d.ClassifyError(errors.Join(errors.New("insert"), pgErr))
		if want == nil {
			if errors.Is(err, skiplock.ErrDiskFull) || errors.Is(err, skiplock.ErrReadOnly) {
				t.Errorf("%s: %v", code, err)
			}
			continue
		}
		if !errors.Is(err, want) || !errors.As(err, &pgErr) {
			t.Errorf("%s: %v, want %v", code, err, want)
		}
	}
}
