package vault

import (
	"context"
	"slices"
	"time"

	"github.com/skiplock/skiplock"
)

// A job's version is its finish time in microseconds. A job retried after
// the vault stored it finishes again, later: that run is another version,
// stored beside the first, and the vault answers the latest of a job's
// versions only. Holding an id is not holding the job.

// versionOf answers the version of a finished job.
func versionOf(j *skiplock.JobRow) int64 { return micro(*j.FinishedAt).UnixMicro() }

// versionRecord is the two columns of a jobs file that name a version.
type versionRecord struct {
	ID         int64      `parquet:"id"`
	FinishedAt *time.Time `parquet:"finished_at,optional,timestamp(microsecond)"`
}

// versions answers the versions the done parts hold of the ids in want.
func (v *Vault) versions(ctx context.Context, m *manifest, want idSet) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(want) == 0 {
		return out, nil
	}
	for _, p := range m.Parts {
		if p.Pending || !want.meets(p.IDs) {
			continue
		}
		err := readParquet(ctx, v.b, p.Jobs, func(r *versionRecord) error {
			if r.FinishedAt != nil && want.has(r.ID) {
				out[r.ID] = append(out[r.ID], micro(*r.FinishedAt).UnixMicro())
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// latest answers the latest version of each job the vault holds more than
// once (nil when it holds none twice, as a vault nothing was retried from).
func (v *Vault) latest(ctx context.Context, m *manifest) (map[int64]int64, error) {
	shared := m.sharedIDs()
	if len(shared) == 0 {
		return nil, nil
	}
	all, err := v.versions(ctx, m, shared)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]int64, len(all))
	for id, vs := range all {
		out[id] = slices.Max(vs)
	}
	return out, nil
}

// sharedIDs answers the ids that more than one done part holds. A part's
// own ranges never overlap, so any overlap of two ranges in id order is
// between two parts.
func (m *manifest) sharedIDs() idSet {
	var all []idRange
	for _, p := range m.Parts {
		if !p.Pending {
			all = append(all, p.IDs...)
		}
	}
	slices.SortFunc(all, func(a, b idRange) int { return compareInt(a[0], b[0]) })
	var shared []idRange
	var hi int64
	for i, r := range all {
		if i > 0 && r[0] <= hi {
			shared = append(shared, idRange{r[0], min(r[1], hi)})
		}
		if i == 0 || r[1] > hi {
			hi = r[1]
		}
	}
	return merged(shared)
}

// heldIn answers the ids among jobs that the done parts hold, as a set.
func heldIn(held idSet, jobs []*skiplock.JobRow) idSet {
	var ids []int64
	for _, j := range jobs {
		if held.has(j.ID) {
			ids = append(ids, j.ID)
		}
	}
	slices.Sort(ids)
	return idSet(rangesOf(slices.Compact(ids)))
}
