package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"
)

// manifestKey is the manifest's object; the underscore hides it from Hive
// readers.
const manifestKey = "_manifest.json"

// manifest lists the parts of a vault. A part is recorded pending before
// its files are written and done after; a pending part found on the next
// open is done if its jobs file exists (the writer died after the upload)
// and is dropped with its leftovers otherwise.
type manifest struct {
	Version int     `json:"version"`
	Parts   []*Part `json:"parts"`
}

// Part is one jobs file of the vault and its metrics file.
type Part struct {
	// Jobs and Metrics are the files' keys under the vault's root.
	Jobs    string `json:"jobs"`
	Metrics string `json:"metrics"`
	// Hour is the hour (UTC) in which the part's jobs finished.
	Hour time.Time `json:"hour"`
	// Rows is the number of jobs in the file, Bytes its size.
	Rows  int   `json:"rows"`
	Bytes int64 `json:"bytes"`
	// IDs are the job ids the part holds, as sorted inclusive ranges.
	IDs     []idRange `json:"ids"`
	Pending bool      `json:"pending,omitempty"`
}

// MinID answers the lowest job id of the part.
func (p *Part) MinID() int64 { return p.IDs[0][0] }

// MaxID answers the highest job id of the part.
func (p *Part) MaxID() int64 { return p.IDs[len(p.IDs)-1][1] }

// idRange is an inclusive range of job ids, [first, last].
type idRange [2]int64

// rangesOf answers sorted ids as ranges.
func rangesOf(ids []int64) []idRange {
	var out []idRange
	for _, id := range ids {
		if n := len(out); n > 0 && out[n-1][1]+1 == id {
			out[n-1][1] = id
			continue
		}
		out = append(out, idRange{id, id})
	}
	return out
}

// idSet answers whether the vault holds an id.
type idSet []idRange

// heldIDs answers the ids of the done parts, merged and sorted.
func (m *manifest) heldIDs() idSet {
	var all []idRange
	for _, p := range m.Parts {
		if !p.Pending {
			all = append(all, p.IDs...)
		}
	}
	return merged(all)
}

// merged answers ranges sorted and merged into a set.
func merged(all []idRange) idSet {
	slices.SortFunc(all, func(a, b idRange) int { return compareInt(a[0], b[0]) })
	var out idSet
	for _, r := range all {
		if n := len(out); n > 0 && out[n-1][1]+1 >= r[0] {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s idSet) has(id int64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i][1] >= id })
	return i < len(s) && s[i][0] <= id
}

// meets answers whether any of ranges (sorted) overlaps the set.
func (s idSet) meets(ranges []idRange) bool {
	for _, r := range ranges {
		i := sort.Search(len(s), func(i int) bool { return s[i][1] >= r[0] })
		if i < len(s) && s[i][0] <= r[1] {
			return true
		}
	}
	return false
}

// loadManifest reads the manifest; a vault without one is empty.
func loadManifest(ctx context.Context, b backend) (*manifest, error) {
	obj, _, err := b.open(ctx, manifestKey)
	if errors.Is(err, errNotExist) {
		return &manifest{Version: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the vault manifest: %w", err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		return nil, fmt.Errorf("read the vault manifest: %w", err)
	}
	m := &manifest{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("vault manifest %s/%s: %w", b, manifestKey, err)
	}
	if m.Version != 1 {
		return nil, fmt.Errorf("vault manifest %s/%s: version %d, this skiplock reads version 1", b, manifestKey, m.Version)
	}
	return m, nil
}

// save replaces the manifest whole.
func (m *manifest) save(ctx context.Context, b backend) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	w, err := b.create(ctx, manifestKey)
	if err != nil {
		return fmt.Errorf("write the vault manifest: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		w.abort()
		return fmt.Errorf("write the vault manifest: %w", err)
	}
	if err := w.commit(ctx); err != nil {
		return fmt.Errorf("write the vault manifest: %w", err)
	}
	return nil
}

// recover settles the parts a killed writer left pending: a part whose jobs
// file exists is done; any other is dropped with its metrics file. It
// answers whether anything changed.
func (m *manifest) recover(ctx context.Context, b backend) (bool, error) {
	changed := false
	kept := m.Parts[:0]
	for _, p := range m.Parts {
		if !p.Pending {
			kept = append(kept, p)
			continue
		}
		changed = true
		size, err := b.size(ctx, p.Jobs)
		switch {
		case err == nil:
			p.Pending, p.Bytes = false, size
			kept = append(kept, p)
		case errors.Is(err, errNotExist):
			if err := b.remove(ctx, p.Metrics); err != nil {
				return false, fmt.Errorf("remove %s left by an interrupted write: %w", p.Metrics, err)
			}
		default:
			return false, fmt.Errorf("check %s left by an interrupted write: %w", p.Jobs, err)
		}
	}
	m.Parts = kept
	return changed, nil
}
