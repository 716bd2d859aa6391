package skiplock_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/driver"
)

const strictFile = `version: 1
strict: true
kinds:
  file:
    queue: ingest
    payload: {type: object, required: [file_path]}
`

const otherFile = `version: 1
kinds:
  file: {queue: other}
`

func mustSet(t *testing.T, src string) *contract.Set {
	t.Helper()
	set, err := contract.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestStoredContractsBindEveryClient: contracts applied to the database are
// enforced by a client configured with none; a client with a different
// file refuses unless told which wins.
func TestStoredContractsBindEveryClient(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, open func(t *testing.T) driver.Driver) {
		ctx := context.Background()
		drv := open(t)
		newClient := func(cfg *skiplock.Config) *skiplock.Client {
			c, err := skiplock.NewClient(drv, cfg)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		admin := newClient(nil)
		if _, err := admin.ContractsStored(ctx); !errors.Is(err, skiplock.ErrNotFound) {
			t.Fatalf("stored before any apply: %v", err)
		}
		stored, err := admin.ContractsApply(ctx, mustSet(t, strictFile))
		if err != nil || stored.Version != 1 || !stored.Strict {
			t.Fatalf("apply: %+v, %v", stored, err)
		}
		plain := newClient(nil) // configured with no contracts
		insert := func(c *skiplock.Client, kind, payload string) (*skiplock.InsertResult, error) {
			return c.Insert(ctx, skiplock.RawArgs{KindName: kind, Payload: json.RawMessage(payload)}, nil)
		}
		var ve *skiplock.ValidationError
		if _, err := insert(plain, "fil", `{}`); !errors.As(err, &ve) || ve.Field != "kind" {
			t.Fatalf("unknown kind under the stored strict set: %v", err)
		}
		if _, err := insert(plain, "file", `{}`); !errors.As(err, &ve) {
			t.Fatalf("payload against the stored schema: %v", err)
		}
		res, err := insert(plain, "file", `{"file_path":"/a"}`)
		if err != nil || res.Job.Queue != "ingest" {
			t.Fatalf("valid job: %+v, %v; want queue ingest from the stored set", res, err)
		}
		if v := plain.ContractsVersion(); v != 1 {
			t.Fatalf("version in force %d", v)
		}

		other := mustSet(t, otherFile)
		refusing := newClient(&skiplock.Config{Contracts: other})
		if err := refusing.Start(ctx); !errors.Is(err, skiplock.ErrContractsDiffer) {
			t.Fatalf("start with a different file: %v, want ErrContractsDiffer", err)
		}
		if _, err := insert(refusing, "file", `{"file_path":"/a"}`); !errors.Is(err, skiplock.ErrContractsDiffer) {
			t.Fatalf("insert with a different file: %v, want ErrContractsDiffer", err)
		}
		storedWins := newClient(&skiplock.Config{Contracts: other, ContractsWin: skiplock.ContractsStoredWins})
		if res, err := insert(storedWins, "file", `{"file_path":"/a"}`); err != nil || res.Job.Queue != "ingest" {
			t.Fatalf("stored wins: %+v, %v", res, err)
		}
		fileWins := newClient(&skiplock.Config{Contracts: other, ContractsWin: skiplock.ContractsConfigWins})
		if res, err := insert(fileWins, "file", `{}`); err != nil || res.Job.Queue != "other" {
			t.Fatalf("file wins: %+v, %v", res, err)
		}
		// The same file as the stored one is no conflict; a new version
		// is what a new client enforces.
		same := newClient(&skiplock.Config{Contracts: mustSet(t, strictFile)})
		if _, err := insert(same, "file", `{"file_path":"/b"}`); err != nil {
			t.Fatal(err)
		}
		if v2, err := admin.ContractsApply(ctx, other); err != nil || v2.Version != 2 {
			t.Fatalf("apply v2: %+v, %v", v2, err)
		}
		if res, err := insert(newClient(nil), "anything", `{}`); err != nil || res.Job.Queue != "default" {
			t.Fatalf("after v2 (not strict): %+v, %v", res, err)
		}
	})
}
