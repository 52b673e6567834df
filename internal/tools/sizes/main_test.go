package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// body is a function of n lines in all.
func body(name string, n int) string {
	return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", n-2) + "}\n"
}

func TestCheckFile(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string // finding whats
	}{
		{"short", "package p\n" + body("f", 10), nil},
		{"at the bound", "package p\n" + body("f", 20), nil},
		{"over the bound", "package p\n" + body("f", 21), []string{"func f"}},
		{"over with a reason", "package p\n// f does.\n//\n// Long: a table.\n" + body("f", 21), nil},
		{"over, Long elsewhere", "package p\n// f is not Long: no.\n" + body("f", 21), []string{"func f"}},
		{"method", "package p\ntype T struct{}\n" + strings.Replace(body("f", 21), "func f", "func (t *T) f", 1), []string{"func (T).f"}},
		{"long file", "package p\n" + strings.Repeat("var _ = 0\n", 40), []string{"file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", c.src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range checkFile(fset, "x.go", f, 30, 20) {
				got = append(got, x.what)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("findings %v, want %v", got, c.want)
			}
		})
	}
}
