package sqlset

import (
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// number rewrites the @name parameters of the statement called name to
// numbered placeholders (with Numbered; else it leaves them) and answers
// the names in the order of their first appearance; nil when the statement
// names none. Comments, quoted text and
// operators that start with @ (@>, @@) are left as they are.
func (s *Set) number(name, sql string) (string, []string) {
	var (
		out        strings.Builder
		params     []string
		positional bool
	)
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				end = len(sql) - i
			}
			out.WriteString(sql[i : i+end])
			i += end
		case c == '\'' || c == '"':
			end := strings.IndexByte(sql[i+1:], c)
			if end < 0 {
				panic(fmt.Sprintf("%s: %s: unterminated %c", s.driver, name, c))
			}
			out.WriteString(sql[i : i+end+2])
			i += end + 2
		case c == '$' && i+1 < len(sql) && isDigit(sql[i+1]):
			positional = true
			out.WriteByte(c)
			i++
		case c == '@' && i+1 < len(sql) && isNameStart(sql[i+1]):
			j := i + 1
			for j < len(sql) && (isNameStart(sql[j]) || isDigit(sql[j])) {
				j++
			}
			p := sql[i+1 : j]
			n := slices.Index(params, p)
			if n < 0 {
				params = append(params, p)
				n = len(params) - 1
			}
			if s.placeholder != "" {
				out.WriteString(s.placeholder + strconv.Itoa(n+1))
			} else {
				out.WriteString(sql[i:j])
			}
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	if positional && params != nil {
		panic(fmt.Sprintf("%s: %s both names and numbers its parameters", s.driver, name))
	}
	return out.String(), params
}

func isDigit(c byte) bool     { return '0' <= c && c <= '9' }
func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// Positional answers the statement called name, which must number its own
// parameters (or have none): a statement with named ones is run through
// Bind, which checks its arguments.
func (s *Set) Positional(name string) string {
	sql := s.Get(name)
	if _, named := s.params[name]; named {
		panic(fmt.Sprintf("%s: %s names its parameters: run it through Bind", s.driver, name))
	}
	return sql
}

// CheckArgs reports whether args, the arguments of a call of the statement
// called name, are sql.NamedArg values naming exactly its parameters; for
// a driver whose database reads the names itself, where a name not given
// would be bound NULL without a word. Its tests turn it on at every call.
func (s *Set) CheckArgs(name string, args []any) error {
	params := s.params[name]
	var given []string
	for _, a := range args {
		na, ok := a.(sql.NamedArg)
		if !ok {
			return fmt.Errorf("%s: %s: argument %v is not named", s.driver, name, a)
		}
		if !slices.Contains(params, na.Name) {
			return fmt.Errorf("%s: %s does not use @%s", s.driver, name, na.Name)
		}
		given = append(given, na.Name)
	}
	for _, p := range params {
		if !slices.Contains(given, p) {
			return fmt.Errorf("%s: %s uses @%s, which the call does not give", s.driver, name, p)
		}
	}
	return nil
}

// Params answers the named parameters of the statement called name in the
// order of their first appearance (their numbers, with Numbered); nil for
// a statement that has none or numbers its own.
func (s *Set) Params(name string) []string {
	s.Get(name)
	return slices.Clone(s.params[name])
}

// Unbound answers the statements with named parameters that no Bind has
// tied to a struct: a test of the driver asserts there are none, so that
// every named statement's arguments are checked at load.
func (s *Set) Unbound() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n := range s.params {
		if !s.bound[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Stmt is a statement whose arguments are the fields of A tagged
// `sql:"name"`, one for each of its named parameters.
type Stmt[A any] struct {
	// SQL is the statement, its parameters numbered.
	SQL string
	// fields are the index paths of A's fields in parameter order.
	fields [][]int
	// into is the statement with {{table}} left in; "" when it names none.
	into string
}

// Into answers the statement writing table (an identifier, quoted as the
// database needs) where it names {{table}}; "" for a statement that names
// none (see Writes).
func (st Stmt[A]) Into(table string) string {
	if st.into == "" {
		return ""
	}
	return strings.ReplaceAll(st.into, tableMacro, table)
}

// Writes says whether the statement names the table it writes ({{table}}).
func (st Stmt[A]) Writes() bool { return st.into != "" }

// Bind ties the statement called name to A, a struct whose fields tagged
// `sql:"name"` (embedded structs' fields included) are its parameters. A
// parameter without a field, a field no parameter names, or a statement
// that numbers its own parameters panics: the driver declares its
// statements in package variables, so the mistake stops it at load.
func Bind[A any](s *Set, name string) Stmt[A] {
	sql := s.Get(name)
	params, ok := s.params[name]
	if !ok {
		panic(fmt.Sprintf("%s: %s has no named parameters to bind", s.driver, name))
	}
	t := reflect.TypeFor[A]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("%s: %s binds to %s, not a struct", s.driver, name, t))
	}
	byTag := map[string][]int{}
	for _, f := range reflect.VisibleFields(t) {
		tag, ok := f.Tag.Lookup("sql")
		if !ok {
			continue
		}
		if !f.IsExported() {
			panic(fmt.Sprintf("%s: %s.%s gives @%s but is not exported", s.driver, t, f.Name, tag))
		}
		if !slices.Contains(params, tag) {
			panic(fmt.Sprintf("%s: %s does not use %s.%s (sql:%q)", s.driver, name, t, f.Name, tag))
		}
		if _, dup := byTag[tag]; dup {
			panic(fmt.Sprintf("%s: %s gives @%s twice", s.driver, t, tag))
		}
		byTag[tag] = f.Index
	}
	st := Stmt[A]{SQL: sql, fields: make([][]int, len(params)), into: s.tables[name]}
	for i, p := range params {
		if st.fields[i] = byTag[p]; st.fields[i] == nil {
			panic(fmt.Sprintf("%s: %s uses @%s, which %s does not give", s.driver, name, p, t))
		}
	}
	s.mu.Lock()
	s.bound[name] = true
	s.mu.Unlock()
	return st
}

// Args answers a's fields in the order of the statement's parameters.
func (st Stmt[A]) Args(a A) []any {
	v := reflect.ValueOf(a)
	out := make([]any, len(st.fields))
	for i, f := range st.fields {
		out[i] = v.FieldByIndex(f).Interface()
	}
	return out
}
