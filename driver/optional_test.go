package driver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/skiplock/skiplock/driver"
)

// coreOnly has the core contract only (its methods are never called).
type coreOnly struct{ driver.Executor }

// admin has the admin store on top of the core.
type admin struct {
	coreOnly
	driver.AdminStore
}

// watch wraps an executor and has every store, as a watching layer does.
type watch struct {
	driver.Full
	inner driver.Executor
}

func (w watch) UnwrapExecutor() driver.Executor { return w.inner }

// JobGet disambiguates the embedded core of admin.
func (a admin) JobGet(ctx context.Context, id int64) (*driver.Job, error) {
	return a.coreOnly.JobGet(ctx, id)
}

func TestAsFindsOnlyTheStoresTheDriverHas(t *testing.T) {
	if _, err := driver.As[driver.AdminStore](coreOnly{}); !errors.Is(err, driver.ErrUnsupported) {
		t.Fatalf("core only: err %v, want ErrUnsupported", err)
	}
	if !driver.Supports[driver.AdminStore](admin{}) {
		t.Fatal("admin store not found")
	}
	w := watch{inner: coreOnly{}}
	if _, err := driver.As[driver.StatsStore](w); !errors.Is(err, driver.ErrUnsupported) {
		t.Fatalf("watched core only: err %v, want ErrUnsupported", err)
	}
	w = watch{inner: admin{}}
	if s, err := driver.As[driver.AdminStore](w); err != nil || s != driver.AdminStore(w) {
		t.Fatalf("watched admin: got %v, %v; want the watch itself", s, err)
	}
	if driver.Supports[driver.TokenStore](w) {
		t.Fatal("watched admin store has no token store")
	}
}
