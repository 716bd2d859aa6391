// Package sqlset reads a driver's statements from one .sql file: each
// statement follows a `-- name: Name` line. {{cols}} expands to the job
// columns in scan order; {{cols d: col=expr, …}} to the same list read from
// alias d with the named columns replaced. {{table}} marks where a statement
// names the table it writes: it reads as the set's table (Table), and
// Stmt.Into answers the statement for another table of the same shape. The
// expansion happens once, when the driver package loads.
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

var colsMacro = regexp.MustCompile(`\{\{cols(?: (\w+):([^}]*))?\}\}`)

// MustParse reads src; columns is the job column list in scan order. A
// malformed file is a programming error of the driver and panics at load.
func MustParse(driver, src string, columns []string, opts ...Option) *Set {
	s := &Set{driver: driver, columns: columns, byName: map[string]string{},
		params: map[string][]string{}, bound: map[string]bool{}, tables: map[string]string{}}
	for _, o := range opts {
		o(s)
	}
	for _, part := range strings.Split(src, "-- name: ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		name = strings.TrimSpace(name)
		if _, dup := s.byName[name]; dup {
			panic(fmt.Sprintf("%s: two statements are named %s", driver, name))
		}
		body = colsMacro.ReplaceAllStringFunc(strings.TrimSpace(body), s.expandCols)
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
