package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// readsQueues tells the statements that read jobs' queues from every shard
// (CitusJobQueue, CitusJobQueues).
func readsQueues(sql string) bool {
	return strings.Contains(sql, "SELECT queue FROM skiplock_jobs WHERE id = $1") ||
		strings.Contains(sql, "SELECT id, queue FROM skiplock_jobs WHERE id = ANY(")
}

// batchLog is a statementLog that records the statements of batches too.
type batchLog struct{ statementLog }

func (l *batchLog) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.mu.Lock()
	l.sqls = append(l.sqls, strings.Join(strings.Fields(d.SQL), " "))
	l.mu.Unlock()
}

// TestCitusReportsWithQueueReadNoShardFirst: on Citus an HTTP worker's
// reports that name the job's queue (heartbeat, complete, fail, a batch, a
// claim's completions) go straight to the queue's shard: no statement
// reads the job's queue from every shard first, and the report's own
// names the queue (so that the coordinator plans it on one shard,
// driver/pgdriver's TestCitusHotStatementsAreOneShards). Without queue,
// the read comes first.
func TestCitusReportsWithQueueReadNoShardFirst(t *testing.T) {
	_, url := pgtest.CitusSchema(t)
	log := &batchLog{}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = log
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	b := setupOn(t, pgdriver.New(pool), nil)
	ids := claimedIn(t, b, "cq", 6)
	report := func(what, path, body string) []string {
		t.Helper()
		log.take()
		a := must(t, b.do(t, "POST", path, "", body), 200)
		if r := maps(a.body["results"]); len(r) == 1 && r[0]["ok"] != true {
			t.Fatalf("%s: %s", what, a.raw)
		}
		if r := maps(a.body["completed"]); len(r) == 1 && r[0]["ok"] != true {
			t.Fatalf("%s: %s", what, a.raw)
		}
		return log.take()
	}
	single := func(i int, action string) string { return fmt.Sprintf("/v1/jobs/%d/%s", ids[i], action) }
	for _, c := range []struct{ what, path, body string }{
		{"heartbeat", single(0, "heartbeat"), `{"worker_id":"w","attempt":1,"queue":"cq","progress":5}`},
		{"complete", single(0, "complete"), `{"worker_id":"w","attempt":1,"queue":"cq"}`},
		{"fail", single(1, "fail"), `{"worker_id":"w","attempt":1,"queue":"cq","retryable":false,"error":{"type":"x"}}`},
		{"batch", "/v1/jobs/complete", fmt.Sprintf(`{"worker_id":"w","jobs":[{"id":%d,"attempt":1,"queue":"cq"}]}`, ids[2])},
		{"claim", "/v1/queues/cq/claim", fmt.Sprintf(`{"worker_id":"w","complete":[{"id":%d,"attempt":1,"queue":"cq"}]}`, ids[3])},
	} {
		sqls := report(c.what, c.path, c.body)
		named := false
		for _, s := range sqls {
			if readsQueues(s) {
				t.Errorf("%s with its queue read the job's queue from every shard:\n%s", c.what, strings.Join(sqls, "\n"))
			}
			named = named || strings.Contains(s, "queue = $") || strings.Contains(s, "queue = ANY(")
		}
		if !named {
			t.Errorf("%s: no statement names the job's queue:\n%s", c.what, strings.Join(sqls, "\n"))
		}
	}
	sqls := report("complete without queue", single(4, "complete"), `{"worker_id":"w","attempt":1}`)
	if len(sqls) == 0 || !readsQueues(sqls[0]) {
		t.Errorf("complete without its queue: the queue's read does not come first:\n%s", strings.Join(sqls, "\n"))
	}
}
