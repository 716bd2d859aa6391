package vault

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/skiplock/skiplock"
)

// Vault is a store of finished jobs as Parquet files; see the package doc.
// It is safe for concurrent use within one process; two processes must
// not write one vault at the same time.
type Vault struct {
	b  backend
	mu sync.Mutex
	// at, when set (by tests), is called at each step of a store: "pending"
	// (manifest written), "committed" (a part's files written), "done".
	at func(step string)
}

var _ skiplock.Vault = (*Vault)(nil)

// Open opens the vault at location: a directory path or file:// URL
// (created if missing), or s3://BUCKET/PREFIX with optional parameters
// endpoint=HOST:PORT (default s3.amazonaws.com), region=… and insecure=1
// (plain HTTP); S3 credentials come from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. A vault that a writer left
// mid-store is settled here, and the temporary files it left removed.
func Open(ctx context.Context, location string) (*Vault, error) {
	b, err := openBackend(ctx, location)
	if err != nil {
		return nil, err
	}
	v := &Vault{b: b}
	if err := b.sweep(ctx); err != nil {
		return nil, fmt.Errorf("vault %s: %w", b, err)
	}
	if _, err := v.settled(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// LocationError is Open's error about a location that cannot name a
// vault (as opposed to one that cannot be reached).
type LocationError struct{ msg string }

func (e *LocationError) Error() string { return e.msg }

func badLocation(format string, args ...any) error {
	return &LocationError{msg: fmt.Sprintf(format, args...)}
}

func openBackend(ctx context.Context, location string) (backend, error) {
	switch {
	case location == "":
		return nil, badLocation("vault: no location (a directory, file://PATH or s3://BUCKET/PREFIX)")
	case strings.HasPrefix(location, "s3://"):
		u, err := url.Parse(location)
		if err != nil {
			return nil, badLocation("vault url: %v", err)
		}
		return newS3Backend(ctx, u)
	case strings.HasPrefix(location, "file://"):
		u, err := url.Parse(location)
		if err != nil {
			return nil, badLocation("vault url: %v", err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, badLocation("vault url %q: a file URL names a local path (file:///PATH)", location)
		}
	case strings.Contains(location, "://"):
		return nil, badLocation("vault url %q: unknown scheme (a directory, file://PATH or s3://BUCKET/PREFIX)", location)
	}
	dir, _ := LocalDir(location)
	return newDirBackend(dir)
}

// LocalDir answers the directory a location names when it names a local
// one: a path, or file://PATH (file:///abs, file://localhost/abs).
func LocalDir(location string) (string, bool) {
	switch {
	case strings.HasPrefix(location, "file://"):
		u, err := url.Parse(location)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return "", false
		}
		return filepath.FromSlash(u.Path), true
	case strings.Contains(location, "://"):
		return "", false
	}
	return location, true
}

// String names the vault: its directory or s3:// URL.
func (v *Vault) String() string { return v.b.String() }

// settled answers the manifest with the parts a killed writer left pending
// settled, and saved when that changed it.
func (v *Vault) settled(ctx context.Context) (*manifest, error) {
	m, err := loadManifest(ctx, v.b)
	if err != nil {
		return nil, err
	}
	changed, err := m.recover(ctx, v.b)
	if err != nil {
		return nil, err
	}
	if changed {
		if err := m.save(ctx, v.b); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// StoreResult is what one Put stored.
type StoreResult struct {
	// Stored counts the jobs written; Held those the vault had already,
	// in the same version (a job finished again since is written again).
	Stored, Held int
	// Parts are the parts written, one per hour of finish.
	Parts []*Part
}

// Store writes the finished jobs the vault does not hold yet in their
// version; see skiplock.Vault.
func (v *Vault) Store(ctx context.Context, jobs []*skiplock.JobRow) (int, error) {
	res, err := v.Put(ctx, jobs)
	return res.Stored, err
}

// Put is Store, answering what it wrote. Every job must be finished
// (completed, failed or cancelled, with a finish time).
func (v *Vault) Put(ctx context.Context, jobs []*skiplock.JobRow) (StoreResult, error) {
	for _, j := range jobs {
		if !finished(j) {
			return StoreResult{}, fmt.Errorf("vault: job %d is %s: the vault keeps finished jobs only", j.ID, j.State)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	m, err := v.settled(ctx)
	if err != nil {
		return StoreResult{}, err
	}
	stored, err := v.heldVersions(ctx, m, jobs)
	if err != nil {
		return StoreResult{}, err
	}
	groups, held := newByHour(stored, jobs)
	res := StoreResult{Held: held}
	if len(groups) == 0 {
		return res, nil
	}
	for _, g := range groups {
		p, err := newPart(g.hour, g.jobs)
		if err != nil {
			return StoreResult{}, err
		}
		res.Parts = append(res.Parts, p)
		res.Stored += len(g.jobs)
	}
	// Record the parts before writing them: a writer killed from here on
	// leaves them pending, and the next open keeps those whose jobs file
	// made it and drops the rest.
	m.Parts = append(m.Parts, res.Parts...)
	if err := m.save(ctx, v.b); err != nil {
		return StoreResult{}, err
	}
	v.step("pending")
	for i, p := range res.Parts {
		if err := v.writePart(ctx, p, groups[i].jobs); err != nil {
			return StoreResult{}, err
		}
		v.step("committed")
	}
	for _, p := range res.Parts {
		p.Pending = false
	}
	if err := m.save(ctx, v.b); err != nil {
		return StoreResult{}, err
	}
	v.step("done")
	return res, nil
}

func (v *Vault) step(s string) {
	if v.at != nil {
		v.at(s)
	}
}

func finished(j *skiplock.JobRow) bool {
	switch j.State {
	case skiplock.StateCompleted, skiplock.StateFailed, skiplock.StateCancelled:
		return j.FinishedAt != nil
	}
	return false
}

// hourGroup is the jobs of one hour of finish, sorted by id.
type hourGroup struct {
	hour time.Time
	jobs []*skiplock.JobRow
}

// heldVersions answers the versions the vault holds of the jobs whose ids
// it holds: only those parts are read.
func (v *Vault) heldVersions(ctx context.Context, m *manifest, jobs []*skiplock.JobRow) (map[version]bool, error) {
	byID, err := v.versions(ctx, m, heldIn(m.heldIDs(), jobs))
	if err != nil {
		return nil, err
	}
	out := map[version]bool{}
	for id, vs := range byID {
		for _, at := range vs {
			out[version{id, at}] = true
		}
	}
	return out, nil
}

// version names one finish of a job (see versionOf).
type version struct{ id, at int64 }

// newByHour groups the jobs whose version is not in held (each version
// once) by the hour they finished in, and counts those held.
func newByHour(held map[version]bool, jobs []*skiplock.JobRow) ([]hourGroup, int) {
	byHour := map[time.Time][]*skiplock.JobRow{}
	seen := make(map[version]bool, len(jobs))
	nHeld := 0
	for _, j := range jobs {
		ver := version{j.ID, versionOf(j)}
		if seen[ver] {
			continue
		}
		seen[ver] = true
		if held[ver] {
			nHeld++
			continue
		}
		h := j.FinishedAt.UTC().Truncate(time.Hour)
		byHour[h] = append(byHour[h], j)
	}
	out := make([]hourGroup, 0, len(byHour))
	for h, js := range byHour {
		slices.SortFunc(js, func(a, b *skiplock.JobRow) int { return cmp.Compare(a.ID, b.ID) })
		out = append(out, hourGroup{hour: h, jobs: js})
	}
	slices.SortFunc(out, func(a, b hourGroup) int { return a.hour.Compare(b.hour) })
	return out, nHeld
}

// newPart names a pending part for jobs (sorted by id) of one hour.
func newPart(hour time.Time, jobs []*skiplock.JobRow) (*Part, error) {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("part-%d-%d-%s.parquet", ids[0], ids[len(ids)-1], hex.EncodeToString(b))
	dir := hour.Format("date=2006-01-02/hour=15")
	return &Part{Jobs: "jobs/" + dir + "/" + name, Metrics: "metrics/" + dir + "/" + name, Hour: hour,
		Rows: len(jobs), IDs: rangesOf(ids), Pending: true}, nil
}

// writePart writes the metrics file, then the jobs file: a jobs file that
// exists always has its metrics.
func (v *Vault) writePart(ctx context.Context, p *Part, jobs []*skiplock.JobRow) error {
	if _, err := writeParquet(ctx, v.b, p.Metrics, hourMetrics(p.Hour, jobs)); err != nil {
		return err
	}
	recs := make([]jobRecord, len(jobs))
	for i, j := range jobs {
		r, err := newJobRecord(j)
		if err != nil {
			return err
		}
		recs[i] = r
	}
	n, err := writeParquet(ctx, v.b, p.Jobs, recs)
	if err != nil {
		return err
	}
	p.Bytes = n
	return nil
}

// rowGroupRows bounds a row group, so that a reader holds a slice of a
// large part at a time.
const rowGroupRows = 64 * 1024

// compression is zstd at its fastest level: on the columns of finished jobs
// it compresses as well as the default level (a little better, measured) for
// less of the encoding time, which is most of what an export spends.
var compression = &zstd.Codec{Level: zstd.SpeedFastest}

// writeParquet writes rows to key as one zstd-compressed Parquet file and
// answers its size.
func writeParquet[T any](ctx context.Context, b backend, key string, rows []T) (int64, error) {
	obj, err := b.create(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("vault: create %s: %w", key, err)
	}
	cw := &countingWriter{w: obj}
	w := parquet.NewGenericWriter[T](cw, parquet.Compression(compression), parquet.MaxRowsPerRowGroup(rowGroupRows),
		parquet.CreatedBy("skiplock", skiplock.Version(), skiplock.Commit()))
	if _, err := w.Write(rows); err != nil {
		obj.abort()
		return 0, fmt.Errorf("vault: write %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		obj.abort()
		return 0, fmt.Errorf("vault: write %s: %w", key, err)
	}
	if err := obj.commit(ctx); err != nil {
		return 0, fmt.Errorf("vault: write %s: %w", key, err)
	}
	return cw.n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
