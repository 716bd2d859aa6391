package sqlitedriver

import (
	"os"
	"slices"
	"testing"

	"github.com/skiplock/skiplock/driver/sqlset"
)

// TestJobFilterNamesAsPostgres: the job filter (the JobFilter fragment of
// each driver) takes the same parameters, by the same names, in both
// drivers, and every listing and bulk selection reads all of them.
func TestJobFilterNamesAsPostgres(t *testing.T) {
	src, err := os.ReadFile("../pgdriver/queries.sql")
	if err != nil {
		t.Fatal(err)
	}
	pg := sqlset.MustParse("pgdriver", string(src), sqlset.JobColumns, sqlset.Numbered("$"), sqlset.Table("skiplock_jobs"))
	own := map[string][]string{ // each statement's parameters besides the filter's
		"JobSelectLive":     {"after", "limit"},
		"JobSelectArchived": {"after", "limit"},
		"JobList":           {"live", "archived", "before_id", "limit", "by_time"},
	}
	filter := func(s *sqlset.Set, name string) []string {
		var out []string
		for _, p := range s.Params(name) {
			if !slices.Contains(own[name], p) {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out
	}
	want := filter(queries, "JobSelectLive")
	if len(want) < 17 {
		t.Fatalf("sqlitedriver's filter has %d parameters: %v", len(want), want)
	}
	for name := range own {
		for driver, s := range map[string]*sqlset.Set{"sqlitedriver": queries, "pgdriver": pg} {
			if got := filter(s, name); !slices.Equal(got, want) {
				t.Errorf("%s %s filters by %v, want %v", driver, name, got, want)
			}
		}
	}
}
