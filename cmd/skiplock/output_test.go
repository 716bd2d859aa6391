package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// jsonOut runs the command and decodes its --json answer into v.
func jsonOut(t *testing.T, url string, v any, args ...string) {
	t.Helper()
	r := runCLI(t, url, append(args, "--json")...)
	if r.code != 0 {
		t.Fatalf("%v --json: %+v", args, r)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("%v --json printed %q: %v", args, r.stdout, err)
	}
}

// lineOut runs an action and checks its human form: exactly want, one line.
func lineOut(t *testing.T, url, want string, args ...string) {
	t.Helper()
	if r := runCLI(t, url, args...); r.code != 0 || r.stdout != want+"\n" {
		t.Errorf("%v: exit %d, stdout %q; want the one line %q", args, r.code, r.stdout, want)
	}
}

// tableOut runs a listing and checks its human form: a header with these
// columns and rows lines under it.
func tableOut(t *testing.T, url string, header []string, rows int, args ...string) []string {
	t.Helper()
	r := runCLI(t, url, args...)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != rows+1 || !slicesEqualFields(lines[0], header) {
		t.Errorf("%v: exit %d, stdout %q; want header %v and %d rows", args, r.code, r.stdout, header, rows)
	}
	return lines
}

func slicesEqualFields(line string, want []string) bool {
	return strings.Join(strings.Fields(line), " ") == strings.Join(want, " ")
}

type jobJSON struct {
	ID         int64   `json:"id"`
	Kind       string  `json:"kind"`
	Queue      string  `json:"queue"`
	State      string  `json:"state"`
	Attempt    *int    `json:"attempt"`
	MaxRetries int     `json:"max_retries"`
	WorkflowID *string `json:"workflow_id"`
}

func TestCLIJobOutput(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := open(t)
			var mig struct {
				Applied []struct {
					Version *int   `json:"version"`
					Name    string `json:"name"`
				} `json:"applied"`
			}
			jsonOut(t, url, &mig, "migrate", "up") // opening the database applied them already
			if mig.Applied == nil {
				t.Fatalf("migrate up --json: %+v, want an empty list of applied migrations", mig)
			}
			var status struct {
				Migrations []struct {
					Version   int     `json:"version"`
					AppliedAt *string `json:"applied_at"`
				} `json:"migrations"`
			}
			jsonOut(t, url, &status, "migrate", "status")
			if len(status.Migrations) == 0 || status.Migrations[0].Version != 1 || status.Migrations[0].AppliedAt == nil {
				t.Fatalf("migrate status --json: %+v", status)
			}
			tableOut(t, url, []string{"VERSION", "NAME", "APPLIED"}, len(status.Migrations), "migrate", "status")

			var enq struct {
				Job       jobJSON         `json:"job"`
				Duplicate json.RawMessage `json:"duplicate"`
			}
			jsonOut(t, url, &enq, "enqueue", "email", "--queue", "mail", "--max-retries", "3", "--workflow-id", "wf", "--stage", "send")
			first := enq.Job.ID
			jsonOut(t, url, &enq, "enqueue", "email", "--queue", "mail", "--workflow-id", "wf")
			second := enq.Job.ID
			if enq.Duplicate != nil {
				t.Errorf("enqueue --json says duplicate %s on a new job (the API leaves it out)", enq.Duplicate)
			}

			var page struct {
				Jobs       []jobJSON `json:"jobs"`
				NextCursor *string   `json:"next_cursor"`
			}
			jsonOut(t, url, &page, "jobs", "list", "--limit", "1")
			if len(page.Jobs) != 1 || page.Jobs[0].ID != second || page.NextCursor == nil || *page.NextCursor != strconv.FormatInt(second, 10) {
				t.Errorf("jobs list --limit 1 --json: %+v, want job %d and next_cursor %q", page, second, strconv.FormatInt(second, 10))
			}
			jsonOut(t, url, &page, "jobs", "list", "--cursor", strconv.FormatInt(second, 10))
			if len(page.Jobs) != 1 || page.Jobs[0].ID != first || page.NextCursor == nil || *page.NextCursor != "" {
				t.Errorf("jobs list --cursor --json (last page): %+v", page)
			}
			lines := tableOut(t, url, []string{"ID", "KIND", "QUEUE", "STATE", "ATTEMPT", "PRIORITY", "RUN_AT"}, 2,
				"jobs", "list", "--limit", "1")
			if want := "next page: --cursor " + strconv.FormatInt(second, 10); lines[len(lines)-1] != want {
				t.Errorf("jobs list --limit 1 ends %q, want %q", lines[len(lines)-1], want)
			}

			id := strconv.FormatInt(first, 10)
			var one struct {
				Job jobJSON `json:"job"`
			}
			jsonOut(t, url, &one, "jobs", "show", id)
			if one.Job.ID != first || one.Job.Kind != "email" || one.Job.Attempt == nil || one.Job.WorkflowID == nil {
				t.Errorf("jobs show --json: %+v", one)
			}
			if r := runCLI(t, url, "jobs", "show", id); r.code != 0 || !strings.Contains(r.stdout, "state") ||
				!strings.Contains(r.stdout, "pending (next attempt 1 of 4)") || strings.Contains(r.stdout, "{\n") {
				t.Errorf("jobs show (human): %+v", r)
			}
			lineOut(t, url, fmt.Sprintf("job %d cancelled: cancelled (attempt 0 of 4)", first), "jobs", "cancel", id)
			lineOut(t, url, fmt.Sprintf("job %d retried: pending (next attempt 1 of 4)", first), "jobs", "retry", id)
			lineOut(t, url, fmt.Sprintf("job %d paused: paused (next attempt 1 of 4)", first), "jobs", "pause", id)
			jsonOut(t, url, &one, "jobs", "resume", id)
			if one.Job.ID != first || one.Job.State != "pending" {
				t.Errorf("jobs resume --json: %+v", one)
			}

			var wf struct {
				WorkflowID   string         `json:"workflow_id"`
				State        string         `json:"state"`
				Jobs         []jobJSON      `json:"jobs"`
				CurrentStage *string        `json:"current_stage"`
				Stages       []any          `json:"stages"`
				Counts       map[string]int `json:"counts"`
			}
			jsonOut(t, url, &wf, "workflows", "show", "wf")
			if wf.WorkflowID != "wf" || wf.State != "running" || len(wf.Jobs) != 2 || wf.Jobs[0].ID != first ||
				wf.CurrentStage == nil || len(wf.Stages) != 2 || wf.Counts["pending"] != 2 {
				t.Errorf("workflows show --json: %+v", wf)
			}
			if r := runCLI(t, url, "workflows", "show", "wf"); r.code != 0 || !strings.HasPrefix(r.stdout, "workflow wf: running") ||
				strings.Count(r.stdout, "\n") != 4 {
				t.Errorf("workflows show (human): %+v", r)
			}
		})
	}
}

func TestCLIAdminOutput(t *testing.T) {
	t.Parallel()
	url := filepath.Join(t.TempDir(), "admin.db")
	if r := runCLI(t, url, "enqueue", "email", "--queue", "mail"); r.code != 0 {
		t.Fatalf("enqueue: %+v", r)
	}
	var qs struct {
		Queues []struct {
			Name          string           `json:"name"`
			Paused        *bool            `json:"paused"`
			Counts        map[string]int64 `json:"counts"`
			OldestPending *float64         `json:"oldest_pending_age_seconds"`
		} `json:"queues"`
	}
	jsonOut(t, url, &qs, "queues", "list")
	if len(qs.Queues) != 1 || qs.Queues[0].Name != "mail" || qs.Queues[0].Paused == nil || qs.Queues[0].Counts["pending"] != 1 ||
		qs.Queues[0].OldestPending == nil {
		t.Errorf("queues list --json: %+v", qs)
	}
	tableOut(t, url, []string{"QUEUE", "PAUSED", "PENDING", "SCHEDULED", "RUNNING", "WAITING", "OLDEST_PENDING"}, 1, "queues", "list")
	var q struct {
		Queue struct {
			Name   string `json:"name"`
			Paused bool   `json:"paused"`
		} `json:"queue"`
	}
	jsonOut(t, url, &q, "queues", "pause", "mail")
	if q.Queue.Name != "mail" || !q.Queue.Paused {
		t.Errorf("queues pause --json: %+v", q)
	}
	lineOut(t, url, "queue mail resumed", "queues", "resume", "mail")

	var sched struct {
		Schedule struct {
			Key          string   `json:"key"`
			EverySeconds *float64 `json:"every_seconds"`
		} `json:"schedule"`
	}
	jsonOut(t, url, &sched, "schedules", "add", "s1", "--kind", "k", "--every", "1h")
	if sched.Schedule.Key != "s1" || sched.Schedule.EverySeconds == nil || *sched.Schedule.EverySeconds != 3600 {
		t.Errorf("schedules add --json: %+v", sched)
	}
	var scheds struct {
		Schedules []struct {
			Key string `json:"key"`
		} `json:"schedules"`
	}
	jsonOut(t, url, &scheds, "schedules", "list")
	if len(scheds.Schedules) != 1 || scheds.Schedules[0].Key != "s1" {
		t.Errorf("schedules list --json: %+v", scheds)
	}
	tableOut(t, url, []string{"TENANT", "KEY", "KIND", "QUEUE", "EVERY", "NEXT_RUN_AT"}, 1, "schedules", "list")
	lineOut(t, url, "schedule s1 removed", "schedules", "remove", "s1")

	var tok struct {
		Token struct {
			ID   int64  `json:"id"`
			Role string `json:"role"`
		} `json:"token"`
		Secret string `json:"secret"`
	}
	jsonOut(t, url, &tok, "token", "create", "--role", "viewer", "--name", "dash")
	if tok.Token.ID == 0 || tok.Token.Role != "viewer" || tok.Secret == "" {
		t.Errorf("token create --json: %+v", tok)
	}
	r := runCLI(t, url, "token", "list", "--json")
	var toks struct {
		Tokens []map[string]any `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &toks); err != nil || len(toks.Tokens) != 1 || toks.Tokens[0]["name"] != "dash" ||
		strings.Contains(r.stdout, tok.Secret) || toks.Tokens[0]["created_at"] == nil {
		t.Errorf("token list --json: %+v (%v)", r, err)
	}
	tableOut(t, url, []string{"ID", "NAME", "ROLE", "TENANT", "CREATED"}, 1, "token", "list")
	lineOut(t, url, fmt.Sprintf("token %d revoked", tok.Token.ID), "token", "revoke", strconv.FormatInt(tok.Token.ID, 10))

	var kinds struct {
		Strict *bool            `json:"strict"`
		Kinds  []map[string]any `json:"kinds"`
	}
	file, err := filepath.Abs(filepath.Join("..", "..", "examples", "contracts", "unified-queue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	jsonOut(t, url, &kinds, "contracts", "check", file)
	if kinds.Strict == nil || len(kinds.Kinds) == 0 || kinds.Kinds[0]["kind"] == nil {
		t.Errorf("contracts check --json: %+v", kinds)
	}
}

// Unknown subcommands and typos exit 2 with one line, suggesting the
// nearest command; cobra alone printed the group's help and exited 0.
func TestCLIUnknownCommand(t *testing.T) {
	t.Parallel()
	url := filepath.Join(t.TempDir(), "unknown.db")
	for args, want := range map[string]string{
		"jobs lst":         `unknown command "lst" for "skiplock jobs"; did you mean "list"?`,
		"jobs retyr 1":     `unknown command "retyr" for "skiplock jobs"; did you mean "retry"?`,
		"frobnicate":       `unknown command "frobnicate" for "skiplock"; see 'skiplock --help'`,
		"queus list":       `unknown command "queus" for "skiplock"; did you mean "queues"?`,
		"schedules lsit":   `unknown command "lsit" for "skiplock schedules"; did you mean "list"?`,
		"migrate stauts":   `unknown command "stauts" for "skiplock migrate"; did you mean "status"?`,
		"token frobnicate": `unknown command "frobnicate" for "skiplock token"; see 'skiplock token --help'`,
	} {
		r := runCLI(t, url, strings.Fields(args)...)
		if r.code != 2 || r.stderr != "skiplock: "+want+"\n" || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
	if r := runCLI(t, url, "jobs"); r.code != 0 || !strings.Contains(r.stdout, "Available Commands") {
		t.Errorf("jobs alone prints its help: %+v", r)
	}
}

func TestCLIVersion(t *testing.T) {
	t.Parallel()
	want := "skiplock devel (commit unknown, " + runtime.Version() + ")\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if r := runCLI(t, filepath.Join(t.TempDir(), "v.db"), args...); r.code != 0 || r.stdout != want {
			t.Errorf("%v: %+v, want %q", args, r, want)
		}
	}
	// A release build sets the version and commit with -ldflags -X.
	bin := filepath.Join(t.TempDir(), "skiplock")
	build := exec.Command("go", "build", "-o", bin, "-ldflags",
		"-X main.version=v1.2.3 -X main.commit=0123456789abcdef0123", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	var v struct {
		Version, Commit string
		GoVersion       string `json:"go_version"`
	}
	if err != nil || json.Unmarshal(out, &v) != nil || v.Version != "v1.2.3" || v.Commit != "0123456789abcdef0123" ||
		v.GoVersion != runtime.Version() {
		t.Errorf("version --json of a release build: %s (%v)", out, err)
	}
	out, err = exec.Command(bin, "--version").Output()
	if err != nil || string(out) != "skiplock v1.2.3 (commit 0123456789ab, "+runtime.Version()+")\n" {
		t.Errorf("--version of a release build: %q (%v)", out, err)
	}
	_ = os.Remove(bin)
}
