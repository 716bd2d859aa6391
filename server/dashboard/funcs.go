package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/attempts"
)

// funcs are the templates' helpers; none of them returns unescaped text
// built from job data.
var funcs = template.FuncMap{
	"json":  prettyJSON,
	"ago":   ago,
	"lag":   lag,
	"until": until,
	"utc":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"utcp": func(t *time.Time) string {
		return orDash(t, func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") })
	},
	"agep":       func(t *time.Time) string { return orDash(t, ago) },
	"seconds":    func(s float64) string { return age(time.Duration(s * float64(time.Second))) },
	"percent":    func(n, of int64) string { return percent(n, of) },
	"num":        func(n int64) string { return group(n) },
	"count":      count,
	"states":     func() []skiplock.JobState { return allStates },
	"live":       func() []skiplock.JobState { return liveStates },
	"query":      withQuery,
	"contains":   func(list []string, s string) bool { return contains(list, s) },
	"pathesc":    url.PathEscape,
	"dict":       dict,
	"allowed":    attempts.Allowed,
	"attemptOf":  func(j *skiplock.JobView) string { return attempts.Of(j.State, j.Attempt, j.MaxRetries) },
	"attemptEnd": attempts.End,
	"started":    started,
}

// started reports whether a job's current attempt has started: a job
// waiting for its next attempt (after a retry, or a backoff) shows no start,
// heartbeat or lease of the attempt before.
func started(j *skiplock.JobView) bool {
	switch j.State {
	case skiplock.StatePending, skiplock.StateScheduled, skiplock.StateWaiting, skiplock.StatePaused:
		return false
	}
	return true
}

var allStates = []skiplock.JobState{skiplock.StatePending, skiplock.StateRunning, skiplock.StateScheduled,
	skiplock.StateWaiting, skiplock.StatePaused, skiplock.StateCompleted, skiplock.StateFailed, skiplock.StateCancelled}

var liveStates = allStates[:5]

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// prettyJSON indents a JSON value for a <pre>, with <, > and & written as
// themselves (html/template escapes them), so "<script>" reads as typed.
func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func orDash(t *time.Time, f func(time.Time) string) string {
	if t == nil {
		return "—"
	}
	return f(*t)
}

func ago(t time.Time) string {
	d := time.Since(t)
	if d < 0 {
		return "in " + age(-d)
	}
	return age(d) + " ago"
}

func until(t time.Time) string {
	d := time.Until(t)
	if d < 0 {
		return age(-d) + " ago"
	}
	return "in " + age(d)
}

// age writes a duration as people read it: 45s, 12m, 3h 05m, 4d 2h.
// lag writes a replica's lag: tenths of a second under ten seconds, where
// a replica usually is, else as an age.
func lag(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return age(d)
}

func age(d time.Duration) string {
	switch {
	case d < time.Second:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

func percent(n, of int64) string {
	if of == 0 {
		return "—"
	}
	return strconv.FormatFloat(100*float64(n)/float64(of), 'f', 1, 64) + "%"
}

// group writes 1234567 as 1,234,567.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// withQuery answers base with the query q and key=value changed (value ""
// removes it).
func withQuery(base string, q url.Values, kv ...string) string {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			out.Del(kv[i])
		} else {
			out.Set(kv[i], kv[i+1])
		}
	}
	if len(out) == 0 {
		return base
	}
	return base + "?" + out.Encode()
}

// dict builds a map from key, value pairs, to pass several values to a
// template.
func dict(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return m
}

// count answers n grouped and the noun that agrees with it: "1 worker",
// "1,200 workers".
func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return group(n) + " " + many
}
