package skiplock_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docsWithRunnableSnippets are the pages whose shell blocks marked runnable
// (a fence info string "sh runnable", or "<!-- runnable -->" on the line
// before a sh fence) must run as written.
var docsWithRunnableSnippets = []string{"README.md", "docs/cli.md", "docs/vault.md", "docs/flow-control.md"}

// Every runnable shell block of the README, the CLI, vault and flow-control pages runs, in order,
// with `sh -e` against a skiplock binary built from this tree and a SQLite
// file of its own, with data on a stdin that is no terminal, and exits 0.
func TestDocShellSnippetsRun(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "skiplock"), "./cmd/skiplock")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build skiplock: %v\n%s", err, out)
	}
	for _, doc := range docsWithRunnableSnippets {
		t.Run(doc, func(t *testing.T) {
			t.Parallel()
			text, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			blocks := runnableBlocks(string(text))
			if len(blocks) == 0 {
				t.Fatalf("%s has no runnable shell block", doc)
			}
			// One directory and database per page: its blocks build on each other.
			dir := t.TempDir()
			env := append(os.Environ(),
				"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"SKIPLOCK_DATABASE_URL="+filepath.Join(dir, "skiplock.db"),
			)
			for _, b := range blocks {
				script := strings.ReplaceAll(b.text, "go run ./cmd/skiplock", "skiplock")
				cmd := exec.Command("sh", "-e", "-c", script)
				cmd.Dir = dir
				cmd.Env = env
				// Stdin is no terminal and holds data, as in a pipe, a CI job
				// or a `while read` loop: no block may depend on either.
				cmd.Stdin = strings.NewReader("a line the blocks must not read\n")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s:%d: the block exits with %v:\n%s\n--- output:\n%s", doc, b.line, err, b.text, out)
				}
			}
		})
	}
}

// snippet is one runnable block and the line its fence opens on.
type snippet struct {
	line int
	text string
}

// runnableBlocks answers the shell blocks of a Markdown text marked runnable.
func runnableBlocks(text string) []snippet {
	var (
		out    []snippet
		cur    *snippet
		body   bytes.Buffer
		marked bool
		inside bool
	)
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case inside && trimmed == "```":
			inside = false
			if cur != nil {
				cur.text = body.String()
				out = append(out, *cur)
				cur = nil
			}
		case inside:
			if cur != nil {
				body.WriteString(line + "\n")
			}
		case strings.HasPrefix(trimmed, "```"):
			inside = true
			info := strings.Fields(strings.TrimPrefix(trimmed, "```"))
			isShell := len(info) > 0 && (info[0] == "sh" || info[0] == "shell" || info[0] == "bash")
			runnable := marked || (len(info) > 1 && info[1] == "runnable")
			if isShell && runnable {
				cur = &snippet{line: n}
				body.Reset()
			}
			marked = false
		case trimmed == "<!-- runnable -->":
			marked = true
		case trimmed != "":
			marked = false
		}
	}
	return out
}

// The extraction takes only marked shell blocks, in both forms.
func TestRunnableBlocksMarking(t *testing.T) {
	t.Parallel()
	md := "```sh\nnot me\n```\n```sh runnable\none\n```\n<!-- runnable -->\n```sh\ntwo\n```\n" +
		"<!-- runnable -->\n\ntext\n```sh\nnot me either\n```\n```go runnable\nno\n```\n"
	got := runnableBlocks(md)
	if len(got) != 2 || got[0].text != "one\n" || got[1].text != "two\n" || got[0].line != 4 {
		t.Fatalf("runnableBlocks = %+v", got)
	}
}
