// Command gen writes dbwatch's forwarders: one method of dbwatch's executor
// for every method of every store of package driver (an interface whose
// name ends in Store), which runs the statement on the watched executor,
// classifies its error and records a write's outcome. A store that
// driver.Executor embeds is called directly; an optional one through
// dbwatch's callN and driver.As, so that a driver without it answers
// driver.ErrUnsupported.
// A method whose doc comment holds the line `//skiplock:read` is a read:
// its error is classified, its success not counted as a write. A read that
// also holds `//skiplock:replica` runs on the driver's replica when there
// is one and ctx does not ask for the primary (dbwatch's executor.reading).
//
//	go run ./gen -driver ../../driver -out forward_gen.go
package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// driverPath is the import path of the package whose stores are forwarded.
const driverPath = "github.com/skiplock/skiplock/driver"

// readDirective marks a method that writes nothing; replicaDirective a
// read that a lagging replica may answer.
const (
	readDirective    = "//skiplock:read"
	replicaDirective = "//skiplock:replica"
)

func main() {
	dir := flag.String("driver", "../../driver", "directory of package driver")
	out := flag.String("out", "forward_gen.go", "file to write")
	flag.Parse()
	src, err := generate(*dir)
	if err != nil {
		log.Fatalf("dbwatch gen: %v", err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatalf("dbwatch gen: %v", err)
	}
}

// store is one interface of package driver whose methods are forwarded.
type store struct {
	name  string
	core  bool // embedded in driver.Executor: no driver.As
	iface *types.Interface
}

// generate answers the forwarders of the stores of the driver package in
// dir, formatted.
func generate(dir string) ([]byte, error) {
	fset := token.NewFileSet()
	files, err := parseDir(fset, dir)
	if err != nil {
		return nil, err
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check(driverPath, fset, files, nil)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", dir, err)
	}
	reads := markedMethods(files, readDirective)
	replicas := markedMethods(files, replicaDirective)
	stores, err := storesOf(pkg)
	if err != nil {
		return nil, err
	}
	g := &writer{pkg: pkg, imports: map[string]bool{"context": true}}
	for _, st := range stores {
		for i := range st.iface.NumExplicitMethods() {
			m := st.iface.ExplicitMethod(i)
			key := st.name + "." + m.Name()
			if replicas[key] && (!reads[key] || st.core) {
				return nil, fmt.Errorf("%s: %s needs %s and an optional store", key, replicaDirective, readDirective)
			}
			if err := g.method(st, m, reads[key], replicas[key]); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", st.name, m.Name(), err)
			}
		}
	}
	return g.source()
}

func parseDir(fset *token.FileSet, dir string) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	return files, nil
}

// markedMethods answers the methods whose doc comment holds the line
// directive, as "Store.Method".
func markedMethods(files []*ast.File, directive string) map[string]bool {
	marked := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			iface, ok := spec.Type.(*ast.InterfaceType)
			if !ok {
				return false
			}
			for _, field := range iface.Methods.List {
				if field.Doc == nil || len(field.Names) == 0 {
					continue
				}
				for _, c := range field.Doc.List {
					if strings.TrimSpace(c.Text) == directive {
						marked[spec.Name.Name+"."+field.Names[0].Name] = true
					}
				}
			}
			return false
		})
	}
	return marked
}

// storesOf answers the stores of pkg by name, those of driver.Executor
// marked core.
func storesOf(pkg *types.Package) ([]store, error) {
	exec, ok := pkg.Scope().Lookup("Executor").Type().Underlying().(*types.Interface)
	if !ok {
		return nil, fmt.Errorf("driver.Executor is no interface")
	}
	core := map[types.Type]bool{}
	for i := range exec.NumEmbeddeds() {
		core[exec.EmbeddedType(i)] = true
	}
	var stores []store
	for _, name := range pkg.Scope().Names() {
		obj, ok := pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok || !obj.Exported() || !strings.HasSuffix(name, "Store") {
			continue
		}
		iface, ok := obj.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		stores = append(stores, store{name: name, core: core[obj.Type()], iface: iface})
	}
	return stores, nil
}

// writer gathers the forwarders and the packages they name.
type writer struct {
	pkg     *types.Package
	imports map[string]bool
	body    bytes.Buffer
}

func (g *writer) qualify(p *types.Package) string {
	if p == g.pkg {
		g.imports[driverPath] = true
		return "driver"
	}
	g.imports[p.Path()] = true
	return p.Name()
}

// reserved are the names a forwarder uses for itself.
var reserved = []string{"e", "st", "err"}

// method writes the forwarder of m, a method of st.
func (g *writer) method(st store, m *types.Func, read, replica bool) error {
	sig := m.Type().(*types.Signature)
	res := sig.Results()
	if res.Len() == 0 || !types.Identical(res.At(res.Len()-1).Type(), types.Universe.Lookup("error").Type()) {
		return fmt.Errorf("its last result is not an error")
	}
	n := res.Len() - 1 // results before the error
	if !st.core && n > maxResults {
		return fmt.Errorf("%d results before the error: add call%d to dbwatch", n, n)
	}
	var typs, values []string
	for i := range n {
		typs = append(typs, types.TypeString(res.At(i).Type(), g.qualify))
		values = append(values, fmt.Sprintf("r%d", i))
	}
	var params, args []string
	for i := range sig.Params().Len() {
		p := sig.Params().At(i)
		name := p.Name()
		if name == "" || name == "_" {
			name = fmt.Sprintf("a%d", i)
		}
		if slices.Contains(reserved, name) || slices.Contains(values, name) {
			return fmt.Errorf("parameter %q: the forwarder uses that name", name)
		}
		typ := types.TypeString(p.Type(), g.qualify)
		arg := name
		if sig.Variadic() && i == sig.Params().Len()-1 {
			typ = "..." + strings.TrimPrefix(typ, "[]")
			arg += "..."
		}
		params, args = append(params, name+" "+typ), append(args, arg)
	}
	results := "error"
	if n > 0 {
		results = "(" + strings.Join(append(slices.Clone(typs), "error"), ", ") + ")"
	}
	outcome := "e.write"
	if read {
		outcome = "e.read"
	}
	call := fmt.Sprintf("%s(%s)", m.Name(), strings.Join(args, ", "))
	w := &g.body
	fmt.Fprintf(w, "\nfunc (e executor) %s(%s) %s {\n", m.Name(), strings.Join(params, ", "), results)
	switch {
	case !st.core:
		g.imports[driverPath] = true
		on := "e"
		if replica {
			if sig.Params().Len() == 0 || sig.Params().At(0).Name() != "ctx" {
				return fmt.Errorf("a read marked %s takes ctx first", replicaDirective)
			}
			on = "e.reading(ctx)"
		}
		fmt.Fprintf(w, "\treturn call%d(%s, %s, func(st driver.%s) %s { return st.%s })\n", n, on, outcome, st.name, results, call)
	case n == 0:
		fmt.Fprintf(w, "\treturn %s(e.Executor.%s)\n", outcome, call)
	default:
		fmt.Fprintf(w, "\t%s, err := e.Executor.%s\n", strings.Join(values, ", "), call)
		fmt.Fprintf(w, "\treturn %s, %s(err)\n", strings.Join(values, ", "), outcome)
	}
	w.WriteString("}\n")
	return nil
}

// maxResults is the most results before the error that dbwatch's callN
// helpers take.
const maxResults = 2

func (g *writer) source() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./gen; DO NOT EDIT.\n\npackage dbwatch\n\nimport (\n")
	// The standard library first, then the module's packages.
	paths := slices.Sorted(maps.Keys(g.imports))
	module := func(p string) int {
		if strings.Contains(p, ".") {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(paths, func(a, b string) int { return cmp.Compare(module(a), module(b)) })
	for i, p := range paths {
		if i > 0 && module(p) != module(paths[i-1]) {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	b.WriteString(")\n")
	b.Write(g.body.Bytes())
	return format.Source(b.Bytes())
}
