package skiplock

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// viewStrings are strings that take every branch of encoding/json's
// quoting: HTML characters, controls, quotes, invalid UTF-8, U+2028.
var viewStrings = []string{"", "plain", "a<b>&c", "tab\there\nnew\r\b\f\x01\x1f", `quote " back \ slash`,
	"é ünïcode ☃ 🚀", "bad \xff\xfe utf8", "sep\u2028\u2029x", "\x7f del", strings.Repeat("x", 300)}

// viewRaws are stored JSON as PostgreSQL's jsonb and callers write it:
// spaces after colons, HTML characters inside strings, nesting.
var viewRaws = []string{`{}`, `{"a": 1, "b": [1, 2, {"c": "<&>"}]}`, "{\n  \"x\" : \"sep\u2028\"\n}", `null`, `"just a string"`,
	`[ ]`, `{"t": 1764099999123456789, "k": "key"}`, `{"esc": "\u003c\"\\"}`, `12.5e3`}

func randomView(r *rand.Rand) *JobView {
	str := func() string { return viewStrings[r.IntN(len(viewStrings))] }
	opt := func() *string {
		if r.IntN(3) == 0 {
			return nil
		}
		s := str()
		return &s
	}
	raw := func() json.RawMessage {
		if r.IntN(5) == 0 {
			return nil
		}
		return json.RawMessage(viewRaws[r.IntN(len(viewRaws))])
	}
	at := func() time.Time {
		return time.Unix(r.Int64N(1<<36), r.Int64N(1e9)*int64(r.IntN(2))).UTC()
	}
	optAt := func() *time.Time {
		if r.IntN(2) == 0 {
			return nil
		}
		t := at()
		return &t
	}
	v := &JobView{ID: r.Int64(), Kind: str(), Op: opt(), Queue: str(), Tenant: str(), State: JobState(str()),
		Priority: r.IntN(11), Payload: raw(), Metadata: raw(), Attempt: r.IntN(30), MaxRetries: r.IntN(30) - 1,
		RunAt: at(), CreatedAt: at(), StartedAt: optAt(), FinishedAt: optAt(), UpdatedAt: at(), LeaseUntil: optAt(),
		WorkerID: opt(), HeartbeatAt: optAt(), Progress: r.IntN(101), ProgressMessage: str(), Checkpoint: raw(),
		Result: raw(), IdempotencyKey: opt(), WorkflowID: opt(), Stage: opt(), CancelRequested: r.IntN(2) == 0}
	switch r.IntN(3) {
	case 1:
		v.Tags = []string{}
		v.DependsOn = []int64{}
		v.Errors = []AttemptError{}
	case 2:
		v.Tags = []string{str(), str()}
		v.DependsOn = []int64{r.Int64(), -1}
		v.Errors = []AttemptError{{Attempt: 1, Type: str(), Message: str(), At: at(), Retryable: true, Stack: str()}}
	}
	if r.IntN(2) == 0 {
		v.Traceparent = str()
	}
	return v
}

// TestJobViewAppendJSONIsEncodingJSON: the hand-written writer answers
// encoding/json's bytes for every view, and with fields picked, the same
// object without the others.
func TestJobViewAppendJSONIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		v := randomView(r)
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.AppendJSON(nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("view %+v\n got %s\nwant %s", v, got, want)
		}

		names := []string{viewFieldNames[r.IntN(len(viewFieldNames))], viewFieldNames[r.IntN(len(viewFieldNames))]}
		f, err := ParseViewFields("fields", names)
		if err != nil {
			t.Fatal(err)
		}
		part, err := v.AppendJSON(nil, f)
		if err != nil {
			t.Fatal(err)
		}
		var all, some map[string]json.RawMessage
		if err := json.Unmarshal(want, &all); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(part, &some); err != nil {
			t.Fatalf("%s: %v", part, err)
		}
		for _, n := range append(names, "id", "attempt") {
			if _, ok := some[n]; !ok && !(n == "traceparent" && v.Traceparent == "") {
				t.Fatalf("fields %v: %s lacks %q", names, part, n)
			}
		}
		for n, val := range some {
			if string(val) != string(all[n]) {
				t.Fatalf("field %q: %s, whole view has %s", n, val, all[n])
			}
		}
		if len(some) > len(names)+2 {
			t.Fatalf("fields %v: %s has more", names, part)
		}
	}
}

// TestJobViewAppendJSONRefusesWhatEncodingJSONRefuses: stored JSON that is
// not JSON, and a time JSON cannot write, fail as with encoding/json.
func TestJobViewAppendJSONRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for name, v := range map[string]*JobView{
		"payload": {Payload: json.RawMessage(`{"a": `)},
		"year":    {RunAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		_, want := json.Marshal(v)
		got, err := v.AppendJSON([]byte("keep"), 0)
		if want == nil || err == nil || err.Error() != want.Error() {
			t.Errorf("%s: error %v, encoding/json's %v", name, err, want)
		}
		if string(got) != "keep" {
			t.Errorf("%s: answered %q, want what was there", name, got)
		}
	}
	// Another zone is written as encoding/json writes it.
	v := &JobView{RunAt: time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 5400))}
	want, _ := json.Marshal(v)
	got, err := v.AppendJSON(nil, 0)
	if err != nil || string(got) != string(want) {
		t.Errorf("zone: %s, %v; want %s", got, err, want)
	}
}

func TestParseViewFieldsNamesTheUnknown(t *testing.T) {
	_, err := ParseViewFields("fields", []string{"kind", "payload", "colour"})
	if err == nil || !strings.Contains(err.Error(), "fields[2]") || !strings.Contains(err.Error(), `"colour"`) {
		t.Fatalf("error %v, want one naming fields[2] and \"colour\"", err)
	}
	vt := reflect.TypeFor[JobView]()
	if vt.NumField() != len(viewFieldNames) || vfEnd != 1<<len(viewFieldNames) {
		t.Fatalf("JobView has %d fields, the writer %d names and end bit %d", vt.NumField(), len(viewFieldNames), vfEnd)
	}
	for i := range vt.NumField() {
		if name, _, _ := strings.Cut(vt.Field(i).Tag.Get("json"), ","); name != viewFieldNames[i] {
			t.Errorf("JobView's field %d is %q, the writer's %q", i, name, viewFieldNames[i])
		}
	}
}

func FuzzJobViewAppendJSON(f *testing.F) {
	for _, s := range viewStrings {
		f.Add(s, `{"a": 1}`)
	}
	for _, raw := range viewRaws {
		f.Add("k", raw)
	}
	f.Fuzz(func(t *testing.T, s, raw string) {
		v := &JobView{Kind: s, Tags: []string{s}, Payload: json.RawMessage(raw), WorkerID: &s}
		want, werr := json.Marshal(v)
		got, err := v.AppendJSON(nil, 0)
		if (werr == nil) != (err == nil) || (err == nil && string(got) != string(want)) {
			t.Fatalf("got %s, %v; encoding/json %s, %v", got, err, want, werr)
		}
	})
}
