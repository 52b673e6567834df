package sched

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPurity parses the package's non-test files and fails on imports or
// calls that would make the core impure: I/O, the clock, logging,
// unseeded randomness, the container runtime, the spool.
func TestPurity(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]bool{
		"os": true, "os/exec": true, "os/signal": true, "net": true, "syscall": true,
		"log": true, "log/slog": true, "io/ioutil": true, "unsafe": true,
		"github.com/sharq-hpc/sharq/spool": true, "github.com/sharq-hpc/sharq/runtime": true,
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		checked++
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		names := map[string]string{} // local name -> import path
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case forbidden[path], strings.HasPrefix(path, "net/"),
				strings.HasPrefix(path, "github.com/containerd/"),
				strings.HasPrefix(path, "github.com/sharq-hpc/sharq/spool/"), strings.HasPrefix(path, "github.com/sharq-hpc/sharq/runtime/"):
				t.Errorf("%s: imports %s", fset.Position(imp.Pos()), path)
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = path
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			path := names[id.Name]
			switch {
			case path == "time" && (sel.Sel.Name == "Now" || sel.Sel.Name == "Since" || sel.Sel.Name == "Until" ||
				sel.Sel.Name == "Sleep" || sel.Sel.Name == "After" || sel.Sel.Name == "Tick" || sel.Sel.Name == "NewTimer" ||
				sel.Sel.Name == "NewTicker" || sel.Sel.Name == "AfterFunc"):
				t.Errorf("%s: uses time.%s", fset.Position(sel.Pos()), sel.Sel.Name)
			case (path == "math/rand" || path == "math/rand/v2") && sel.Sel.Name != "New" && sel.Sel.Name != "NewSource" &&
				sel.Sel.Name != "NewPCG" && sel.Sel.Name != "Rand" && sel.Sel.Name != "Source":
				// Package-level functions use the global, unseeded source.
				t.Errorf("%s: uses %s.%s (unseeded randomness)", fset.Position(sel.Pos()), path, sel.Sel.Name)
			case path == "crypto/rand":
				t.Errorf("%s: uses crypto/rand", fset.Position(sel.Pos()))
			}
			return true
		})
		ast.Inspect(file, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: starts a goroutine", fset.Position(g.Pos()))
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("only %d files checked", checked)
	}
}
