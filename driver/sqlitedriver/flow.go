package sqlitedriver

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/sqlset"
)

// flowStatements name the statements of flow.sql. The writer's warm-up
// leaves them out, so that a database without flow rules never prepares
// them; the first flow claim does.
var flowStatements = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range sqlset.MustParse("sqlitedriver", flowSQL, nil).Names() {
		m[name] = true
	}
	return m
}()

// warmFlow prepares the flow statements on the writer, outside a
// transaction (inside one a statement not yet prepared runs as text).
func (e executor) warmFlow(ctx context.Context) {
	if e.tx != nil {
		return
	}
	for name := range flowStatements {
		e.prepared(ctx, name)
	}
}

// flowCandidate is a pending job a flow claim may take, with its keys.
type flowCandidate struct {
	id     int64
	ck, rk string
}

// jobClaimFlow is JobClaim honouring flow keys. The write transaction is
// the only one: it reads the candidates and the room of their keys, picks
// in claim order the jobs that fit, takes their slots and tokens and
// starts them.
func (e executor) jobClaimFlow(ctx context.Context, p driver.ClaimParams, args []any) ([]*driver.Job, error) {
	e.warmFlow(ctx)
	var jobs []*driver.Job
	err := e.inTx(ctx, func(tx executor) error {
		_, now, _ := nowArgs()
		cands, err := collect(func(s scanner) (flowCandidate, error) {
			var c flowCandidate
			return c, s.Scan(&c.id, &c.ck, &c.rk)
		})(tx.wquery(ctx, "FlowCandidates", only("FlowCandidates", append(args, now, sql.Named("scan", p.Max*driver.FlowScanFactor))...)...))
		if err != nil || len(cands) == 0 {
			return err
		}
		free, tokens, err := tx.flowRoom(ctx, cands, now)
		if err != nil {
			return err
		}
		ids, takes, spent := pickFlow(cands, free, tokens, p.Max)
		if len(ids) == 0 {
			return nil
		}
		if len(takes) > 0 {
			if _, err := tx.wexec(ctx, "FlowTake", sql.Named("batch", jsonText(takes)), now); err != nil {
				return err
			}
		}
		if len(spent) > 0 {
			if _, err := tx.wexec(ctx, "FlowSpend", sql.Named("batch", jsonText(spent)), now); err != nil {
				return err
			}
		}
		jobs, err = scanJobs(tx.wquery(ctx, "JobClaimIDs", only("JobClaimIDs", append(args, now, sql.Named("ids", jsonText(ids)))...)...))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim jobs in queue %q: %w", p.Queue, err)
	}
	sort.Slice(jobs, func(i, k int) bool { return jobs[i].Key().Before(jobs[k].Key()) })
	return jobs, nil
}

// flowRoom answers the free slots of the candidates' concurrency keys and
// the tokens of their rate keys.
func (e executor) flowRoom(ctx context.Context, cands []flowCandidate, now sql.NamedArg) (map[string][]int, map[string]float64, error) {
	var rks []string
	wanted := map[string]int{}
	for _, c := range cands {
		if c.ck != "" {
			wanted[c.ck]++
		}
		if c.rk != "" {
			rks = append(rks, c.rk)
		}
	}
	// One short read per key: a key may have thousands of free slots.
	free := map[string][]int{}
	for key, n := range wanted {
		slots, err := collect(func(s scanner) (int, error) {
			var v int
			return v, s.Scan(&v)
		})(e.wquery(ctx, "FlowFreeSlots", sql.Named("key", key), sql.Named("n", n)))
		if err != nil {
			return nil, nil, err
		}
		free[key] = slots
	}
	tokens := map[string]float64{}
	type bucket struct {
		key    string
		tokens float64
	}
	buckets, err := collect(func(s scanner) (bucket, error) {
		var v bucket
		return v, s.Scan(&v.key, &v.tokens)
	})(e.wquery(ctx, "FlowTokens", sql.Named("keys", jsonText(rks)), now))
	if err != nil {
		return nil, nil, err
	}
	for _, b := range buckets {
		tokens[b.key] = b.tokens
	}
	return free, tokens, nil
}

type flowTake struct {
	ID   int64  `json:"id"`
	Key  string `json:"key"`
	Slot int    `json:"slot"`
}

type flowSpend struct {
	Key string `json:"key"`
	N   int    `json:"n"`
}

// pickFlow picks up to max candidates, in order, whose keys have room, and
// answers them with the slots they take and the tokens they spend.
func pickFlow(cands []flowCandidate, free map[string][]int, tokens map[string]float64, max int) ([]int64, []flowTake, []flowSpend) {
	var ids []int64
	var takes []flowTake
	spent := map[string]int{}
	for _, c := range cands {
		if len(ids) == max {
			break
		}
		if c.ck != "" && len(free[c.ck]) == 0 || c.rk != "" && tokens[c.rk] < 1 {
			continue
		}
		if c.ck != "" {
			takes = append(takes, flowTake{ID: c.id, Key: c.ck, Slot: free[c.ck][0]})
			free[c.ck] = free[c.ck][1:]
		}
		if c.rk != "" {
			tokens[c.rk]--
			spent[c.rk]++
		}
		ids = append(ids, c.id)
	}
	var spends []flowSpend
	for k, n := range spent {
		spends = append(spends, flowSpend{Key: k, N: n})
	}
	return ids, takes, spends
}

type flowTag struct {
	ID int64  `json:"id"`
	CK string `json:"ck"`
	RK string `json:"rk"`
}

type flowBucket struct {
	Key   string  `json:"key"`
	Rate  float64 `json:"rate"`
	Burst float64 `json:"burst"`
}

// flowTag sets the flow keys of the jobs just inserted (ids; duplicates
// keep theirs), after making their slots and buckets.
func (e executor) flowTag(ctx context.Context, jobs []*driver.InsertParams, ids []int64, dups []bool) error {
	var tags []flowTag
	slots := map[string]int{}
	buckets := map[string]flowBucket{}
	for i, p := range jobs {
		if p.Flow == nil || dups != nil && dups[i] {
			continue
		}
		f := p.Flow
		tags = append(tags, flowTag{ID: ids[i], CK: f.ConcurrencyKey, RK: f.RateKey})
		if f.ConcurrencyKey != "" {
			slots[f.ConcurrencyKey] = f.ConcurrencyLimit
		}
		if f.RateKey != "" {
			buckets[f.RateKey] = flowBucket{Key: f.RateKey, Rate: f.Rate, Burst: f.Burst}
		}
	}
	if len(tags) == 0 {
		return nil
	}
	_, now, _ := nowArgs()
	for key, n := range slots {
		for _, name := range []string{"FlowSlotsTrim", "FlowSlotsTrimRetired", "FlowSlotsRetire", "FlowSlotsEnsure"} {
			if _, err := e.wexec(ctx, name, only(name, sql.Named("key", key), sql.Named("n", n))...); err != nil {
				return err
			}
		}
	}
	if len(buckets) > 0 {
		list := make([]flowBucket, 0, len(buckets))
		for _, b := range buckets {
			list = append(list, b)
		}
		if _, err := e.wexec(ctx, "FlowBucketsEnsure", sql.Named("batch", jsonText(list)), now); err != nil {
			return err
		}
	}
	_, err := e.wexec(ctx, "FlowTag", sql.Named("batch", jsonText(tags)))
	return err
}

// insertResultFlow tags the jobs of an insert's results.
func (e executor) insertResultFlow(ctx context.Context, jobs []*driver.InsertParams, out []driver.InsertResult) error {
	if !driver.HasFlow(jobs) {
		return nil
	}
	ids, dups := make([]int64, len(out)), make([]bool, len(out))
	for i, r := range out {
		ids[i], dups[i] = r.Job.ID, r.Duplicate
	}
	return e.flowTag(ctx, jobs, ids, dups)
}

func (e executor) FlowUsage(ctx context.Context) ([]driver.FlowUse, error) {
	nowUS, now, _ := nowArgs()
	at := time.UnixMicro(nowUS).UTC()
	return collect(func(s scanner) (driver.FlowUse, error) {
		u := driver.FlowUse{At: at}
		return u, s.Scan(&u.Key, &u.Running, &u.Slots, &u.Tokens, &u.Burst, &u.Rate, &u.Rated)
	})(e.r.QueryContext(ctx, q("FlowUsage"), now))
}

var _ driver.FlowStore = executor{}

func (e executor) FlowTag(ctx context.Context, ids []int64, keys []*driver.FlowKeys) error {
	jobs := make([]*driver.InsertParams, len(ids))
	for i, k := range keys {
		jobs[i] = &driver.InsertParams{Flow: k}
	}
	return e.inTx(ctx, func(tx executor) error { return tx.flowTag(ctx, jobs, ids, nil) })
}
