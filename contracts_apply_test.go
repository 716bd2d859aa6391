package skiplock_test

import (
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// Applying the set in force again stores no new version; a changed set
// does.
func TestContractsApplySameSetStoresOneVersion(t *testing.T) {
	t.Parallel()
	pg, _ := pgtest.Schema(t)
	for name, drv := range map[string]driver.Driver{"sqlite": sqlitetest.New(t), "postgres": pg} {
		t.Run(name, func(t *testing.T) { applySameSetTwice(t, drv) })
	}
}

func applySameSetTwice(t *testing.T, drv driver.Driver) {
	ctx := t.Context()
	c, err := skiplock.NewClient(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(src string) *contract.Set {
		t.Helper()
		set, err := contract.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	v1 := "version: 1\nkinds:\n  email:\n    payload:\n      type: object\n"
	v2 := "version: 1\nkinds:\n  email:\n    priority: 7\n    payload:\n      type: object\n"
	var versions []int
	for _, src := range []string{v1, v1, v2, v2} {
		stored, err := c.ContractsApply(ctx, parse(src))
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, stored.Version)
	}
	if versions[0] != 1 || versions[1] != 1 || versions[2] != 2 || versions[3] != 2 {
		t.Fatalf("versions %v, want [1 1 2 2]", versions)
	}
}
