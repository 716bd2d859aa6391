package dashboard

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/skiplock/skiplock"
)

// History chart geometry, in SVG user units; the SVG keeps its aspect, so
// that lines and dots are not stretched, and is 360 px wide on a phone.
const (
	histW, histH = 600.0, 150.0
	histTop      = 8.0
)

// histPart is one series of a chart: a class (its colour), a name for the
// legend, and its value in a bucket (nil: no value).
type histPart struct {
	class, name string
	value       func(p *skiplock.HistoryPoint) *float64
}

func counted(f func(p *skiplock.HistoryPoint) int64) func(p *skiplock.HistoryPoint) *float64 {
	return func(p *skiplock.HistoryPoint) *float64 { v := float64(f(p)); return &v }
}

// histChart is one chart of the history, drawn as stacked bars or lines.
type histChart struct {
	ID, Title string
	lines     bool
	parts     []histPart
	format    func(float64) string
}

// historyCharts are the overview's charts, in order.
var historyCharts = []histChart{
	{ID: "throughput", Title: "Attempts", parts: []histPart{
		{"ok", "completed", counted(func(p *skiplock.HistoryPoint) int64 { return p.Completed })},
		{"warn", "retried", counted(func(p *skiplock.HistoryPoint) int64 { return p.Retried })},
		{"bad", "failed", counted(func(p *skiplock.HistoryPoint) int64 { return p.Failed })},
		{"off", "cancelled", counted(func(p *skiplock.HistoryPoint) int64 { return p.Cancelled })},
	}, format: func(v float64) string { return group(int64(v)) }},
	{ID: "failure-rate", Title: "Failure rate", parts: []histPart{
		{"bad", "failed or retried", func(p *skiplock.HistoryPoint) *float64 {
			if p.FailureRate == nil {
				return nil
			}
			v := *p.FailureRate * 100
			return &v
		}},
	}, format: func(v float64) string { return fmt.Sprintf("%.0f%%", v) }},
	{ID: "depth", Title: "Queue depth", parts: []histPart{
		{"pend", "pending", counted(func(p *skiplock.HistoryPoint) int64 { return p.Pending })},
		{"run", "running", counted(func(p *skiplock.HistoryPoint) int64 { return p.Running })},
		{"sched", "scheduled", counted(func(p *skiplock.HistoryPoint) int64 { return p.Scheduled })},
	}, format: func(v float64) string { return group(int64(v)) }},
	{ID: "wait", Title: "Wait (run_at to start)", lines: true, parts: []histPart{
		{"p50", "p50", func(p *skiplock.HistoryPoint) *float64 { return p.WaitP50 }},
		{"p95", "p95", func(p *skiplock.HistoryPoint) *float64 { return p.WaitP95 }},
	}, format: formatSeconds},
	{ID: "run", Title: "Run time", lines: true, parts: []histPart{
		{"p50", "p50", func(p *skiplock.HistoryPoint) *float64 { return p.RunP50 }},
		{"p95", "p95", func(p *skiplock.HistoryPoint) *float64 { return p.RunP95 }},
	}, format: formatSeconds},
}

func formatSeconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.0f ms", s*1000)
	}
	return age(time.Duration(s * float64(time.Second)))
}

// draw answers the chart's figure: the SVG holds only numbers; the peak,
// the first and last bucket and the legend are HTML around it (text inside
// the SVG would shrink with it on a phone).
func (c histChart) draw(h *skiplock.History) template.HTML {
	n := max(len(h.Series), 1)
	slot := histW / float64(n)
	peak := c.peak(h)
	scale := (histH - histTop) / peak
	var sb strings.Builder
	fmt.Fprintf(&sb, `<figure class="chartbox" id="chart-%s"><figcaption class="ticks"><span>%s</span></figcaption>`,
		c.ID, template.HTMLEscapeString(c.format(peak)))
	fmt.Fprintf(&sb, `<svg class="chart hist" viewBox="0 0 %g %g" role="img" aria-label="%s per %s over %s">`,
		histW, histH+1, template.HTMLEscapeString(strings.ToLower(c.Title)), bucketName(h), h.Range)
	fmt.Fprintf(&sb, `<line class="axis" x1="0" y1="%g" x2="%g" y2="%g"/>`, histH, histW, histH)
	if c.lines {
		c.drawLines(&sb, h, slot, scale)
	} else {
		c.drawBars(&sb, h, slot, scale)
	}
	sb.WriteString(`</svg>`)
	if len(h.Series) > 0 {
		layout := "15:04"
		if h.BucketSeconds >= 900 {
			layout = "Jan 2 15:04"
		}
		fmt.Fprintf(&sb, `<div class="ticks"><span>%s</span><span>%s UTC</span></div>`,
			h.Series[0].Start.Format(layout), h.Series[len(h.Series)-1].Start.Format(layout))
	}
	sb.WriteString(`<p class="legend">`)
	for _, p := range c.parts {
		fmt.Fprintf(&sb, `<span class="key %s"></span>%s `, p.class, p.name)
	}
	sb.WriteString(`</p></figure>`)
	return template.HTML(sb.String()) // #nosec: built from numbers, times and fixed names only
}

// peak is the chart's top: the largest stack (bars) or value (lines).
func (c histChart) peak(h *skiplock.History) float64 {
	peak := 0.0
	for i := range h.Series {
		sum := 0.0
		for _, p := range c.parts {
			if v := p.value(&h.Series[i]); v != nil {
				if c.lines {
					peak = max(peak, *v)
				}
				sum += *v
			}
		}
		if !c.lines {
			peak = max(peak, sum)
		}
	}
	if peak <= 0 {
		return 1
	}
	return peak
}

func (c histChart) drawBars(sb *strings.Builder, h *skiplock.History, slot, scale float64) {
	bar := max(slot*0.85, 1)
	for i := range h.Series {
		pt := &h.Series[i]
		x, y := float64(i)*slot, histH
		for _, p := range c.parts {
			v := p.value(pt)
			if v == nil || *v <= 0 {
				continue
			}
			ht := *v * scale
			y -= ht
			fmt.Fprintf(sb, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %s %s</title></rect>`,
				p.class, x, y, bar, ht, pt.Start.Format("Jan 2 15:04"), c.format(*v), p.name)
		}
	}
}

// drawLines draws each series as a line through the buckets that have a
// value, with a dot on each (a lone bucket shows as a dot).
func (c histChart) drawLines(sb *strings.Builder, h *skiplock.History, slot, scale float64) {
	for _, p := range c.parts {
		var pts []string
		flush := func() {
			if len(pts) > 1 {
				fmt.Fprintf(sb, `<polyline class="line %s" points="%s"/>`, p.class, strings.Join(pts, " "))
			}
			pts = pts[:0]
		}
		for i := range h.Series {
			pt := &h.Series[i]
			v := p.value(pt)
			if v == nil {
				flush()
				continue
			}
			x, y := (float64(i)+0.5)*slot, histH-*v*scale
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
			fmt.Fprintf(sb, `<circle class="dot %s" cx="%.1f" cy="%.1f" r="2.5"><title>%s: %s %s</title></circle>`,
				p.class, x, y, pt.Start.Format("Jan 2 15:04"), p.name, c.format(*v))
		}
		flush()
	}
}

func bucketName(h *skiplock.History) string {
	switch h.BucketSeconds {
	case 60:
		return "minute"
	case 3600:
		return "hour"
	}
	return fmt.Sprintf("%d minutes", h.BucketSeconds/60)
}
