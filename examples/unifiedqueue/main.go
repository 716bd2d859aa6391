// Command unifiedqueue rebuilds the unified ingestion queue on
// Skiplock: the client enforces the original's contract (item type × operation
// matrix, payload schemas, priorities), derives the original's idempotency keys
// so that a duplicate enqueue returns the live job, and workers take items
// highest priority first.
//
//	go run ./examples/unifiedqueue [--database-url postgres://…] [--contracts FILE] [-v]
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/examples/internal/example"
)

var contractFile = flag.String("contracts", "examples/contracts/unified-queue.yaml", "the contract file")

const tenant = "proj-7f3a" // the original's tenant_id: a project

func main() { example.Run("unifiedqueue", run) }

// item is one enqueue: an item type's payload, an op and maybe a
// priority of its own.
type item struct {
	args     skiplock.JobArgs
	op       string
	priority *int
}

func (it item) opts() *skiplock.InsertOpts {
	return &skiplock.InsertOpts{Op: it.op, Tenant: tenant, Priority: it.priority}
}

func run(ctx context.Context, env example.Env) error {
	contracts, err := contract.Load(*contractFile)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var order []int // priorities in the order items were processed
	workers := skiplock.NewWorkers()
	addWorker[ContentItem](workers, &mu, &order)
	addWorker[FileItem](workers, &mu, &order)
	addWorker[FolderItem](workers, &mu, &order)
	addWorker[LibraryItem](workers, &mu, &order)
	addWorker[DeleteTenantItem](workers, &mu, &order)
	addWorker[RenameItem](workers, &mu, &order)
	client, err := skiplock.NewClient(env.Driver, &skiplock.Config{Contracts: contracts, Workers: workers,
		Logger: env.Logger, Queues: map[string]skiplock.QueueConfig{"unified": {MaxWorkers: 1}}})
	if err != nil {
		return err
	}

	accepted := []item{
		{LibraryItem{"docs", "qdrant-client", "1.15.0"}, "ingest", nil},
		{FolderItem{"code", "/src/app", true}, "scan", nil},
		{FileItem{"code", "/src/app/main.go", "sha256:9f86d0"}, "ingest", nil},
		{RenameItem{"code", "/src/old.go", "/src/new.go"}, "update", nil},
		{DeleteTenantItem{"code", "proj-old", "project_removed"}, "delete", nil},
		{ContentItem{"notes", "remember the milk", "scratchbook"}, "ingest", nil},
		{ContentItem{"notes", "what did I say about milk?", "mcp"}, "ingest", skiplock.Int(10)}, // a user waits
	}
	for _, it := range accepted {
		res, err := client.Insert(ctx, it.args, it.opts())
		if err != nil {
			return fmt.Errorf("%s/%s: want accepted, got %w", it.args.Kind(), it.op, err)
		}
		j := res.Job
		example.Say("accepted %-13s op=%-6s job %d queue=%s priority=%d key=%s", j.Kind, j.Op, j.ID, j.Queue, j.Priority, j.IdempotencyKey)
	}
	if err := rejections(ctx, client); err != nil {
		return err
	}
	if err := duplicates(ctx, client); err != nil {
		return err
	}

	if err := client.Start(ctx); err != nil {
		return err
	}
	defer example.Stop(client)
	jobs, err := client.JobList(ctx, skiplock.JobListParams{Limit: 100})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if _, err := example.WaitFinished(ctx, client, j.ID); err != nil {
			return err
		}
	}
	mu.Lock()
	processed := slices.Clone(order)
	mu.Unlock()
	if !slices.IsSortedFunc(processed, func(a, b int) int { return b - a }) {
		return fmt.Errorf("want items processed highest priority first, got priorities %v", processed)
	}
	example.Say("processed highest priority first: %v", processed)
	if len(jobs) != len(accepted)+1 {
		return fmt.Errorf("want %d jobs stored (rejections and duplicates store nothing), got %d", len(accepted)+1, len(jobs))
	}
	return afterDone(ctx, client)
}

func addWorker[T skiplock.JobArgs](ws *skiplock.Workers, mu *sync.Mutex, order *[]int) {
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[T](func(ctx context.Context, j *skiplock.Job[T]) error {
		mu.Lock()
		*order = append(*order, j.Priority)
		mu.Unlock()
		example.Say("worker: %s/%s job %d priority %d", j.Kind, j.Op, j.ID, j.Priority)
		return nil
	}))
}

// rejections enqueues what the contract refuses; each error names the
// field at fault, and nothing is stored.
func rejections(ctx context.Context, c *skiplock.Client) error {
	rejected := []struct {
		it    item
		field string
	}{
		{item{RenameItem{"code", "/a", "/b"}, "ingest", nil}, "op"},
		{item{DeleteTenantItem{"code", "proj-old", ""}, "update", nil}, "op"},
		{item{FolderItem{"code", "/src", true}, "update", nil}, "op"},
		{item{FileItem{Collection: "code", FilePath: "/src/x.go"}, "", nil}, "op"},
		{item{ImageItem{"code"}, "ingest", nil}, "kind"},
		{item{FileItem{Collection: "code"}, "ingest", nil}, "payload.file_path"},
		{item{FileItem{"code", "/src/x.go", "md5:abc"}, "ingest", nil}, "payload.file_hash"},
		{item{FileItem{"code", "/src/x.go", ""}, "ingest", skiplock.Int(11)}, "priority"},
	}
	for _, r := range rejected {
		_, err := c.Insert(ctx, r.it.args, r.it.opts())
		if field := fieldOf(err); field != r.field {
			return fmt.Errorf("%s/%s: want rejected on field %s, got %v", r.it.args.Kind(), r.it.op, r.field, err)
		}
		example.Say("rejected %-13s op=%-6s %v", r.it.args.Kind(), r.it.op, err)
	}
	return nil
}

// fieldOf answers the field a rejected insert names: the contract's checks
// answer a *contract.ValidationError, the client's own a
// *skiplock.ValidationError.
func fieldOf(err error) string {
	var ce *contract.ValidationError
	var se *skiplock.ValidationError
	switch {
	case errors.As(err, &ce):
		return ce.Field
	case errors.As(err, &se):
		return se.Field
	}
	return ""
}

// duplicates enqueues the same file again: the derived key matches the live
// job, which is returned. Another collection is another key.
func duplicates(ctx context.Context, c *skiplock.Client) error {
	sum := sha256.Sum256([]byte("/src/app/main.go"))
	want := "file:code:" + hex.EncodeToString(sum[:])[:16]
	res, err := c.Insert(ctx, FileItem{Collection: "code", FilePath: "/src/app/main.go"}, &skiplock.InsertOpts{Op: "update", Tenant: tenant})
	if err != nil {
		return err
	}
	example.Say("duplicate file /src/app/main.go: duplicate=%v, the live job %d, key %s", res.Duplicate, res.Job.ID, res.Job.IdempotencyKey)
	if !res.Duplicate || res.Job.IdempotencyKey != want {
		return fmt.Errorf("duplicate: want the live job with key %s, got duplicate=%v key %s", want, res.Duplicate, res.Job.IdempotencyKey)
	}
	example.Say("key = {item_type}:{collection}:{first 16 hex of sha256(file_path)}: ok")
	res, err = c.Insert(ctx, FileItem{Collection: "docs", FilePath: "/src/app/main.go"}, &skiplock.InsertOpts{Op: "ingest", Tenant: tenant})
	if err != nil {
		return err
	}
	example.Say("same file in collection docs: duplicate=%v, new job %d, key %s", res.Duplicate, res.Job.ID, res.Job.IdempotencyKey)
	if res.Duplicate {
		return errors.New("another collection: want a new job")
	}
	return nil
}

// afterDone enqueues the file again once its job finished: policy active
// holds a key only while its job is live.
func afterDone(ctx context.Context, c *skiplock.Client) error {
	res, err := c.Insert(ctx, FileItem{Collection: "code", FilePath: "/src/app/main.go"}, &skiplock.InsertOpts{Op: "update", Tenant: tenant})
	if err != nil {
		return err
	}
	example.Say("file /src/app/main.go again after its job completed: duplicate=%v, new job %d", res.Duplicate, res.Job.ID)
	if res.Duplicate {
		return errors.New("after completion: want a new job")
	}
	_, err = example.WaitFinished(ctx, c, res.Job.ID)
	return err
}
