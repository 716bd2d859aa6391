package vault

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/skiplock/skiplock"
)

// Environment of the export helper process (TestExportHelperProcess).
const (
	helperDB    = "SKIPLOCK_VAULT_HELPER_DB"
	helperVault = "SKIPLOCK_VAULT_HELPER_VAULT"
	// helperStop is "STEP:N": at the Nth time the store reaches STEP, the
	// helper says so on stdout and waits to be killed.
	helperStop = "SKIPLOCK_VAULT_HELPER_STOP"
)

// crashBatch is the helper's export batch: small, so that an export of
// crashJobs jobs makes several stores.
const (
	crashBatch = 25
	crashJobs  = 150
)

// TestExportHelperProcess is the export run in a process that
// TestExportKilledThenRerun kills; it does nothing in a normal test run.
func TestExportHelperProcess(t *testing.T) {
	dbURL := os.Getenv(helperDB)
	if dbURL == "" {
		t.Skip("run by TestExportKilledThenRerun")
	}
	ctx := context.Background()
	c, closeDB, err := clientAt(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	v, err := Open(ctx, os.Getenv(helperVault))
	if err != nil {
		t.Fatal(err)
	}
	step, nth, _ := strings.Cut(os.Getenv(helperStop), ":")
	want, _ := strconv.Atoi(nth)
	seen := 0
	v.at = func(s string) {
		if s != step {
			return
		}
		if seen++; seen == want {
			fmt.Println("stopped at", s)
			_, _ = io.Copy(io.Discard, os.Stdin) // until the test kills this process
		}
	}
	if _, err := Export(ctx, c, v, ExportParams{Batch: crashBatch}); err != nil {
		t.Fatal(err)
	}
	fmt.Println("export finished")
}

// TestExportKilledThenRerun kills an export process at each point of a
// store, reruns the export, and finds every finished job in the vault
// exactly once: through the vault and through the Parquet files on disk
// as any Hive reader sees them.
func TestExportKilledThenRerun(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, db database) {
		jobs := finishJobs(t, db.client, crashJobs)
		for _, stop := range []string{"pending:2", "committed:3", "done:2"} {
			t.Run(strings.ReplaceAll(stop, ":", "-"), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "vault")
				killedAt(t, db.url, dir, stop)
				v, err := Open(context.Background(), dir)
				if err != nil {
					t.Fatal(err)
				}
				held, err := v.Parts(context.Background(), time.Time{}, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				if len(held) == 0 {
					t.Fatalf("killed at %s: the vault kept nothing of the stores that finished", stop)
				}
				res, err := Export(context.Background(), db.client, v, ExportParams{Batch: crashBatch})
				if err != nil {
					t.Fatal(err)
				}
				if res.Stored+res.Held != len(jobs) || res.Held == 0 {
					t.Fatalf("rerun stored %d and found %d held, want %d in all, some held", res.Stored, res.Held, len(jobs))
				}
				checkEachOnce(t, jobs, idsOf(queryAll(t, v)))
				checkEachOnce(t, jobs, idsOnDisk(t, dir))
			})
		}
	})
}

// killedAt runs the export helper until it reports stop, then kills it.
func killedAt(t *testing.T, dbURL, dir, stop string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExportHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), helperDB+"="+dbURL, helperVault+"="+dir, helperStop+"="+stop)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	stopped := false
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "stopped at") {
			stopped = true
			break
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !stopped {
		t.Fatalf("the export helper ended without reaching %s", stop)
	}
}

func idsOf(jobs []*skiplock.JobRow) []int64 {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// idsOnDisk reads the id column of every jobs file a Hive reader would
// read (jobs/date=*/hour=*/*.parquet), manifest or not.
func idsOnDisk(t *testing.T, dir string) []int64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "jobs", "date=*", "hour=*", "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, f := range files {
		rows, err := parquet.ReadFile[struct {
			ID int64 `parquet:"id"`
		}](f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// checkEachOnce fails unless got holds every job's id exactly once and
// nothing else.
func checkEachOnce(t *testing.T, jobs []*skiplock.JobRow, got []int64) {
	t.Helper()
	count := map[int64]int{}
	for _, id := range got {
		count[id]++
	}
	for _, j := range jobs {
		if count[j.ID] != 1 {
			t.Fatalf("job %d is in the vault %d times, want once", j.ID, count[j.ID])
		}
	}
	if len(got) != len(jobs) {
		t.Fatalf("the vault holds %d rows, want %d", len(got), len(jobs))
	}
}
