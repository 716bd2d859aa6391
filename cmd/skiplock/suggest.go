package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError makes a flag error a usage error (exit 2) and, for an unknown
// flag, names the nearest flag of the command: `--stat` → `--state`.
func flagError(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return &usageError{err: err}
	}
	name, _, _ = strings.Cut(name, "=")
	if near := nearestFlag(cmd, name); near != "" {
		return usagef("unknown flag --%s for %q; did you mean --%s?", name, cmd.CommandPath(), near)
	}
	return usagef("unknown flag --%s for %q; see '%s --help'", name, cmd.CommandPath(), cmd.CommandPath())
}

// nearestFlag answers the flag of cmd (its own and inherited) whose name
// is closest to name, within the distance cobra allows commands, or one
// that name is a prefix of (or that is a prefix of name); "" when none is
// close.
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestDist := "", cmd.SuggestionsMinimumDistance
	if bestDist <= 0 {
		bestDist = 2
	}
	bestDist++ // strictly closer than this
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(name, f.Name)
		if len(name) >= 3 && (strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name)) {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// editDistance is the Levenshtein distance of a and b, by bytes (flag
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
