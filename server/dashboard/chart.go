package dashboard

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/skiplock/skiplock"
)

// Chart geometry, in SVG user units; the SVG scales to its box.
const (
	chartW, chartH = 1100.0, 180.0
	chartTop       = 14.0
)

// activityChart draws the series as stacked bars per bucket: completed,
// then failed, then cancelled. Only numbers enter the SVG. The labels (the
// peak, the first and last minute) are HTML around it: text inside the SVG
// would shrink with it, to 4 px on a phone.
func activityChart(a *skiplock.Activity) template.HTML {
	var peak int64 = 1
	for _, b := range a.Series {
		peak = max(peak, b.Completed+b.Failed+b.Cancelled)
	}
	n := max(len(a.Series), 1)
	slot := chartW / float64(n)
	bar := max(slot-1, 1)
	scale := (chartH - chartTop) / float64(peak)
	var sb strings.Builder
	fmt.Fprintf(&sb, `<figure class="chartbox"><figcaption class="ticks"><span>%s/min</span></figcaption>`, group(peak))
	fmt.Fprintf(&sb, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="jobs finished per minute over the last hour">`, chartW, chartH+1)
	fmt.Fprintf(&sb, `<line class="axis" x1="0" y1="%g" x2="%g" y2="%g"/>`, chartH, chartW, chartH)
	for i, b := range a.Series {
		x := float64(i) * slot
		y := chartH
		for _, part := range []struct {
			class string
			n     int64
		}{{"ok", b.Completed}, {"bad", b.Failed}, {"off", b.Cancelled}} {
			if part.n == 0 {
				continue
			}
			h := float64(part.n) * scale
			y -= h
			fmt.Fprintf(&sb, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %d %s</title></rect>`,
				part.class, x, y, bar, h, b.Start.Format("15:04"), part.n, part.class)
		}
	}
	sb.WriteString(`</svg>`)
	if len(a.Series) > 0 {
		first, last := a.Series[0].Start, a.Series[len(a.Series)-1].Start
		fmt.Fprintf(&sb, `<div class="ticks"><span>%s</span><span>%s UTC</span></div>`, first.Format("15:04"), last.Format("15:04"))
	}
	sb.WriteString(`</figure>`)
	return template.HTML(sb.String()) // #nosec: built from numbers and times only
}

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
