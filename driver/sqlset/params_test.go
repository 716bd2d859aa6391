package sqlset

import (
	"slices"
	"strings"
	"testing"
)

const paramsSrc = `
-- name: Held
-- @comment is prose, not a parameter.
UPDATE t SET errors = errors || @entry::jsonb, note = '@quoted'
WHERE id = @id AND attempt = @attempt AND tags @> '{}' AND id > @id;

-- name: Positional
SELECT $1::bigint;
`

type held struct {
	ID      int64 `sql:"id"`
	Attempt int   `sql:"attempt"`
}

type retry struct {
	held
	Entry  []byte `sql:"entry"`
	Ignore string
}

func TestNumberedParameters(t *testing.T) {
	s := MustParse("test", paramsSrc, []string{"id"}, Numbered("$"))
	got := s.Get("Held")
	want := "-- @comment is prose, not a parameter.\n" +
		"UPDATE t SET errors = errors || $1::jsonb, note = '@quoted'\n" +
		"WHERE id = $2 AND attempt = $3 AND tags @> '{}' AND id > $2;"
	if got != want {
		t.Fatalf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	if p := s.Params("Held"); !slices.Equal(p, []string{"entry", "id", "attempt"}) {
		t.Fatalf("params %v", p)
	}
	if p := s.Params("Positional"); p != nil || s.Get("Positional") != "SELECT $1::bigint;" {
		t.Fatalf("a positional statement changed: %v %q", p, s.Get("Positional"))
	}
	if u := s.Unbound(); !slices.Equal(u, []string{"Held"}) {
		t.Fatalf("unbound %v", u)
	}
	st := Bind[retry](s, "Held")
	args := st.Args(retry{held: held{ID: 7, Attempt: 2}, Entry: []byte("x")})
	if len(args) != 3 || string(args[0].([]byte)) != "x" || args[1] != int64(7) || args[2] != 2 {
		t.Fatalf("args %v", args)
	}
	if u := s.Unbound(); len(u) != 0 {
		t.Fatalf("unbound after Bind: %v", u)
	}
}

func TestBindRefusesAMismatch(t *testing.T) {
	s := MustParse("test", paramsSrc, []string{"id"}, Numbered("$"))
	type extra struct {
		retry
		Queue string `sql:"queue"`
	}
	type unexported struct {
		retry
		queue string `sql:"queue"`
	}
	cases := map[string]func(){
		"uses @attempt, which": func() {
			Bind[struct {
				ID int64  `sql:"id"`
				E  []byte `sql:"entry"`
			}](s, "Held")
		},
		"does not use":            func() { Bind[extra](s, "Held") },
		"is not exported":         func() { Bind[unexported](s, "Held").Args(unexported{queue: "q"}) },
		"has no named parameters": func() { Bind[held](s, "Positional") },
		"not a struct":            func() { Bind[int](s, "Held") },
		"both names and numbers":  func() { MustParse("test", "-- name: X\nSELECT @a, $2", nil, Numbered("$")) },
		"no statement named Nope": func() { Bind[held](s, "Nope") },
	}
	for want, f := range cases {
		func() {
			defer func() {
				r, _ := recover().(string)
				if !strings.Contains(r, want) {
					t.Errorf("panic %q, want one saying %q", r, want)
				}
			}()
			f()
		}()
	}
}

func TestPositionalRefusesANamedStatement(t *testing.T) {
	s := MustParse("test", paramsSrc, []string{"id"}, Numbered("$"))
	if s.Positional("Positional") != "SELECT $1::bigint;" {
		t.Fatal("Positional changed a positional statement")
	}
	defer func() {
		if r, _ := recover().(string); !strings.Contains(r, "run it through Bind") {
			t.Fatalf("panic %q", r)
		}
	}()
	s.Positional("Held")
}

// BenchmarkArgs is the cost a named statement adds to a call: its
// arguments read from the struct in parameter order.
func BenchmarkArgs(b *testing.B) {
	s := MustParse("test", paramsSrc, []string{"id"}, Numbered("$"))
	st := Bind[retry](s, "Held")
	a := retry{held: held{ID: 7, Attempt: 2}, Entry: []byte("x")}
	b.ReportAllocs()
	for b.Loop() {
		_ = st.Args(a)
	}
}

// TestFragmentIsWrittenOnce: a fragment expands in every statement that
// names it, its comment lines left out, and is no statement itself; its
// parameters are the statement's, numbered with the statement's own.
func TestFragmentIsWrittenOnce(t *testing.T) {
	const src = `
-- fragment: Filter
-- why the filter reads as it does
(@kind = '' OR kind = @kind)
  AND (@tenant IS NULL OR tenant = @tenant)

-- name: List
SELECT {{cols}} FROM t WHERE {{Filter}} AND id < @before;

-- name: Pick
SELECT id FROM t WHERE id > @after AND {{Filter}};
`
	s := MustParse("test", src, []string{"id", "kind"}, Numbered("$"))
	if got, want := s.Get("List"), "SELECT id, kind FROM t WHERE ($1 = '' OR kind = $1)\n  AND ($2 IS NULL OR tenant = $2) AND id < $3;"; got != want {
		t.Fatalf("List:\n%s\nwant:\n%s", got, want)
	}
	if p := s.Params("Pick"); !slices.Equal(p, []string{"after", "kind", "tenant"}) {
		t.Fatalf("Pick's params %v", p)
	}
	if slices.Contains(s.Names(), "Filter") {
		t.Fatal("a fragment is listed as a statement")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "no fragment {{Missing}}") {
			t.Fatalf("a statement naming no fragment: %v", r)
		}
	}()
	MustParse("test", "-- name: X\nSELECT 1 WHERE {{Missing}};", nil)
}

// {{table}} reads as the set's table, and Into answers the statement for
// another; a statement that names no table writes none.
func TestTableMacro(t *testing.T) {
	src := "-- name: Add\nINSERT INTO {{table}} (id) VALUES (@id);\n\n-- name: Get\nSELECT id FROM t WHERE id = @id;\n"
	s := MustParse("test", src, []string{"id"}, Numbered("$"), Table("jobs"))
	type idArg struct {
		ID int64 `sql:"id"`
	}
	add, get := Bind[idArg](s, "Add"), Bind[idArg](s, "Get")
	if add.SQL != "INSERT INTO jobs (id) VALUES ($1);" || !add.Writes() {
		t.Fatalf("Add: %q, writes %v", add.SQL, add.Writes())
	}
	if got := add.Into(`"spill"`); got != `INSERT INTO "spill" (id) VALUES ($1);` {
		t.Fatalf("Add into spill: %q", got)
	}
	if get.Writes() || get.Into(`"spill"`) != "" {
		t.Fatalf("Get writes a table: %q", get.Into(`"spill"`))
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a set without Table parsed {{table}}")
		}
	}()
	MustParse("test", src, []string{"id"}, Numbered("$"))
}
