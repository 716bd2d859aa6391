package dashboard

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/skiplock/skiplock"
)

// depthBar draws a queue's live jobs by state as one stacked bar.
func depthBar(counts map[skiplock.JobState]int64, peak int64) template.HTML {
	if peak <= 0 {
		peak = 1
	}
	var sb strings.Builder
	sb.WriteString(`<svg class="depth" viewBox="0 0 200 10" preserveAspectRatio="none" aria-hidden="true">`)
	x := 0.0
	for _, st := range liveStates {
		w := 200 * float64(counts[st]) / float64(peak)
		if w <= 0 {
			continue
		}
		fmt.Fprintf(&sb, `<rect class="st-%s" x="%.2f" y="0" width="%.2f" height="10"/>`, st, x, w)
		x += w
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}
