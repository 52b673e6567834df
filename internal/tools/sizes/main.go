// Command sizes lists the Go files over a line limit and the functions over
// a length limit whose doc comment gives no reason: the project's bounds
// (ARCHITECTURE.md: a file over 600 lines or a function over 100 is split,
// or says why). A reason is a doc comment paragraph starting "Long:".
//
//	go run ./internal/tools/sizes [-file 600] [-func 100] [-tests] [dir ...]
//
// With no dir it walks the module from the current directory. It prints
// one line per finding (path:line, what, size) and exits 1 when it found
// any, so a script or CI step can hold a package to the bounds.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	maxFile := flag.Int("file", 600, "longest file, in lines")
	maxFunc := flag.Int("func", 100, "longest function without a reason, in lines")
	tests := flag.Bool("tests", false, "check _test.go files too")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var found []finding
	for _, d := range dirs {
		f, err := check(d, *maxFile, *maxFunc, *tests)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sizes:", err)
			os.Exit(2)
		}
		found = append(found, f...)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].size > found[j].size })
	for _, f := range found {
		fmt.Println(f)
	}
	if len(found) > 0 {
		os.Exit(1)
	}
}

// finding is one file or function over its bound.
type finding struct {
	pos  string
	what string
	size int
}

func (f finding) String() string { return fmt.Sprintf("%s: %s: %d lines", f.pos, f.what, f.size) }

// check walks dir (not vendor, testdata or hidden directories).
func check(dir string, maxFile, maxFunc int, tests bool) ([]finding, error) {
	var out []finding
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || (!tests && strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		out = append(out, checkFile(fset, path, f, maxFile, maxFunc)...)
		return nil
	})
	return out, err
}

func checkFile(fset *token.FileSet, path string, f *ast.File, maxFile, maxFunc int) []finding {
	var out []finding
	if n := fset.File(f.Pos()).LineCount(); n > maxFile {
		out = append(out, finding{path + ":1", "file", n})
	}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		if n := end - start + 1; n > maxFunc && !hasReason(fd.Doc) {
			out = append(out, finding{fmt.Sprintf("%s:%d", path, start), "func " + funcName(fd), n})
		}
	}
	return out
}

// hasReason says whether doc has a line starting "Long:".
func hasReason(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, l := range strings.Split(doc.Text(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Long:") {
			return true
		}
	}
	return false
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fd.Name.Name
	}
	return fd.Name.Name
}
