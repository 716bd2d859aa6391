package server_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestServerDoesNotReachTheDriver keeps the server a transport: its code
// (tests aside, which open databases) imports no driver and no database
// package, and never asks the client for its driver. Stats, events, tokens
// and the wake-up listener come through the library.
func TestServerDoesNotReachTheDriver(t *testing.T) {
	t.Parallel()
	forbidden := []string{"github.com/skiplock/skiplock/driver", "github.com/jackc/pgx", "modernc.org/sqlite",
		"database/sql", "github.com/skiplock/skiplock/internal/dbwatch"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s: the server reaches the database through the library", fset.Position(imp.Pos()), path)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Driver" && len(call.Args) == 0 {
				t.Errorf("%s calls .Driver(): the server reaches the database through the library", fset.Position(call.Pos()))
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no server source files found")
	}
}
