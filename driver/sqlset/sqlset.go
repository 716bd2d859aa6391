// Package sqlset reads a driver's statements from one .sql file: each
// statement follows a `-- name: Name` line. {{cols}} expands to the job
// columns in scan order; {{cols d: col=expr, …}} to the same list read from
// alias d with the named columns replaced. {{table}} marks where a statement
// names the table it writes: it reads as the set's table (Table), and
// Stmt.Into answers the statement for another table of the same shape. A
// block that follows a `-- fragment: Name` line is no statement: {{Name}} in
// any statement expands to it (its comment lines left out), so that a
// condition several statements share is written once. The expansion happens
// once, when the driver package loads.
//
// Parameters are named, @name. With Numbered, a set rewrites them at load
// to numbered placeholders ($1, $2, … on PostgreSQL) and Bind ties a
// statement to a struct whose tagged fields give its arguments: a name the
// statement uses and the struct lacks, or the other way round, stops the
// driver package at load. A set that leaves the names to the database
// (SQLite) checks the sql.NamedArg arguments of a call with CheckArgs.
package sqlset

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/skiplock/skiplock/driver"
)

// JobColumns are the job columns in the order every driver scans them;
// see driver.JobColumns.
var JobColumns = driver.JobColumns

// Set is a driver's statements by name.
type Set struct {
	driver  string
	columns []string
	byName  map[string]string
	// placeholder, when set, numbers named parameters (Numbered).
	placeholder string
	// params are the named parameters of each numbered statement, in the
	// order of their numbers; bound the statements Bind has tied to a struct.
	params map[string][]string
	// table is what {{table}} reads as in Get; tables holds the statements
	// that name it, {{table}} left in (Stmt.Into).
	table  string
	tables map[string]string
	mu     sync.Mutex
	bound  map[string]bool
}

// An Option changes how MustParse reads the statements.
type Option func(*Set)

// Numbered rewrites every @name parameter to placeholder followed by its
// number ("$" gives $1, $2, …), numbered in the order of first appearance;
// a name used twice is one parameter. A statement names its parameters or
// numbers them itself, never both.
func Numbered(placeholder string) Option {
	return func(s *Set) { s.placeholder = placeholder }
}

// Table makes {{table}} read as name in the statements Get answers.
func Table(name string) Option {
	return func(s *Set) { s.table = name }
}

const tableMacro = "{{table}}"

var (
	colsMacro     = regexp.MustCompile(`\{\{cols(?: (\w+):([^}]*))?\}\}`)
	fragmentMacro = regexp.MustCompile(`\{\{(\w+)\}\}`)
	header        = regexp.MustCompile(`-- (name|fragment): `)
)

// MustParse reads src; columns is the job column list in scan order. A
// malformed file is a programming error of the driver and panics at load.
func MustParse(driver, src string, columns []string, opts ...Option) *Set {
	s := &Set{driver: driver, columns: columns, byName: map[string]string{},
		params: map[string][]string{}, bound: map[string]bool{}, tables: map[string]string{}}
	for _, o := range opts {
		o(s)
	}
	fragments := map[string]string{}
	var statements [][2]string
	locs := header.FindAllStringSubmatchIndex(src, -1)
	for i, l := range locs {
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name, body, _ := strings.Cut(src[l[1]:end], "\n")
		name = strings.TrimSpace(name)
		if _, dup := fragments[name]; dup || slices.ContainsFunc(statements, func(st [2]string) bool { return st[0] == name }) {
			panic(fmt.Sprintf("%s: two statements or fragments are named %s", driver, name))
		}
		if src[l[2]:l[3]] == "fragment" {
			fragments[name] = withoutComments(body)
		} else {
			statements = append(statements, [2]string{name, body})
		}
	}
	for _, st := range statements {
		name, body := st[0], strings.TrimSpace(st[1])
		body = fragmentMacro.ReplaceAllStringFunc(body, func(m string) string {
			f, ok := fragments[m[2:len(m)-2]]
			if m == "{{cols}}" || m == tableMacro {
				return m
			} else if !ok {
				panic(fmt.Sprintf("%s: %s: no fragment %s", driver, name, m))
			}
			return f
		})
		body = colsMacro.ReplaceAllStringFunc(body, s.expandCols)
		var params []string
		if body, params = s.number(name, body); params != nil {
			s.params[name] = params
		}
		if strings.Contains(body, tableMacro) {
			if s.table == "" {
				panic(fmt.Sprintf("%s: %s names {{table}}, and the set has no Table", driver, name))
			}
			s.tables[name] = body
			body = strings.ReplaceAll(body, tableMacro, s.table)
		}
		s.byName[name] = body
	}
	return s
}

// withoutComments answers a fragment's lines but its comment lines, so
// that the text after {{Name}} on its line stays in the statement.
func withoutComments(body string) string {
	var keep []string
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// Names answers every statement's name.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	return out
}

// Get answers the statement called name, its parameters numbered. A
// statement with named parameters is run through Bind, which checks them.
func (s *Set) Get(name string) string {
	q, ok := s.byName[name]
	if !ok {
		panic(s.driver + ": no statement named " + name)
	}
	return q
}

// expandCols turns {{cols}} or {{cols d: state='x', …}} into a column list.
func (s *Set) expandCols(m string) string {
	sub := colsMacro.FindStringSubmatch(m)
	alias, overrides := sub[1], s.parseOverrides(sub[2])
	list := make([]string, len(s.columns))
	for i, c := range s.columns {
		switch {
		case overrides[c] != "":
			list[i] = overrides[c]
		case alias != "":
			list[i] = alias + "." + c
		default:
			list[i] = c
		}
	}
	return strings.Join(list, ", ")
}

// parseOverrides splits "a=x, b=f(y, z)" at top-level commas.
func (s *Set) parseOverrides(src string) map[string]string {
	out := map[string]string{}
	depth, start := 0, 0
	inQuote := false
	flush := func(end int) {
		item := strings.TrimSpace(src[start:end])
		if item == "" {
			return
		}
		col, expr, ok := strings.Cut(item, "=")
		if !ok {
			panic(fmt.Sprintf("%s: bad column override %q", s.driver, item))
		}
		out[strings.TrimSpace(col)] = strings.TrimSpace(expr)
	}
	for i, r := range src {
		switch {
		case r == '\'':
			inQuote = !inQuote
		case inQuote:
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			flush(i)
			start = i + 1
		}
	}
	flush(len(src))
	return out
}
