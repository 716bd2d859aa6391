// Package migrations reads a driver's embedded, numbered migration files
// (NNN_name.up.sql / NNN_name.down.sql) and decides which to apply.
package migrations

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// Step is one migration with both directions.
type Step struct {
	Version  int
	Name     string
	Up, Down string
}

// Load reads every step under dir, in version order.
func Load(fsys fs.FS, dir string) ([]Step, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	byVersion := map[int]*Step{}
	for _, e := range entries {
		name := e.Name()
		base, dirn, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), ".")
		num, label, ok2 := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || !ok2 || err != nil || (dirn != "up" && dirn != "down") {
			return nil, fmt.Errorf("migration file %q: want NNN_name.up.sql or NNN_name.down.sql", name)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		s := byVersion[v]
		if s == nil {
			s = &Step{Version: v, Name: label}
			byVersion[v] = s
		}
		if dirn == "up" {
			s.Up = string(body)
		} else {
			s.Down = string(body)
		}
	}
	out := make([]Step, 0, len(byVersion))
	for _, s := range byVersion {
		if s.Up == "" || s.Down == "" {
			return nil, fmt.Errorf("migration %03d_%s: needs both up and down files", s.Version, s.Name)
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Status lists every step with when it was applied.
func Status(all []Step, applied map[int]time.Time) []driver.Migration {
	out := make([]driver.Migration, len(all))
	for i, s := range all {
		out[i] = driver.Migration{Version: s.Version, Name: s.Name}
		if at, ok := applied[s.Version]; ok {
			out[i].Applied = &at
		}
	}
	return out
}

// Pending answers the steps not yet applied, oldest first, at most steps
// of them (all when steps <= 0).
func Pending(all []Step, applied map[int]time.Time, steps int) []Step {
	var out []Step
	for _, s := range all {
		if _, ok := applied[s.Version]; !ok && (steps <= 0 || len(out) < steps) {
			out = append(out, s)
		}
	}
	return out
}

// Revertible answers applied steps newest first, steps of them (one when
// steps <= 0).
func Revertible(all []Step, applied map[int]time.Time, steps int) []Step {
	if steps <= 0 {
		steps = 1
	}
	var out []Step
	for i := len(all) - 1; i >= 0 && len(out) < steps; i-- {
		if _, ok := applied[all[i].Version]; ok {
			out = append(out, all[i])
		}
	}
	return out
}
