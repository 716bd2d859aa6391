package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
)

// progress draws a one-line progress bar on a terminal, redrawn in place
// at most every tick; on anything else (a pipe, a file) it draws nothing,
// so that logs stay clean.
type progress struct {
	w     io.Writer
	on    bool
	verb  string
	total int64 // of the unit of fraction, e.g. input bytes; 0: unknown
	start time.Time
	last  time.Time
}

const progressTick = 100 * time.Millisecond

func newProgress(w io.Writer, verb string, total int64) *progress {
	return &progress{w: w, on: isTTY(w), verb: verb, total: total, start: time.Now()}
}

// isTTY answers whether w is a terminal.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// update shows done jobs; fraction is how far along the total is (bytes
// read, jobs of a known count), used for the bar and the ETA.
func (p *progress) update(done int, fraction int64) {
	if !p.on || done == 0 || time.Since(p.last) < progressTick {
		return
	}
	p.last = time.Now()
	elapsed := time.Since(p.start).Seconds()
	line := fmt.Sprintf("%s %s jobs  %s/s", p.verb, thousands(int64(done)), thousands(int64(float64(done)/max(elapsed, 1e-3))))
	if p.total > 0 && fraction > 0 {
		share := min(float64(fraction)/float64(p.total), 1)
		const width = 24
		fill := int(share * width)
		eta := time.Duration(elapsed/share*(1-share)) * time.Second
		line += fmt.Sprintf("  [%s%s] %3.0f%%  ETA %s", strings.Repeat("=", fill), strings.Repeat(" ", width-fill),
			share*100, eta.Round(time.Second))
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
}

// finish clears the bar, so the summary that follows stands alone.
func (p *progress) finish() {
	if p.on && !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// thousands writes n with commas: 81,300.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// rateLine is a summary's timing: "in 12.3 s (81,300 jobs/s)".
func rateLine(n int, d time.Duration) string {
	return fmt.Sprintf("in %.1f s (%s jobs/s)", d.Seconds(), thousands(int64(float64(n)/max(d.Seconds(), 1e-3))))
}
