package conf

import (
	"strings"
	"testing"
)

func TestScanPositions(t *testing.T) {
	doc := strings.Join([]string{
		`top = """`,                // 1
		`fake = 1`,                 // 2: inside a multi-line string
		`"""`,                      // 3
		`[cluster]`,                // 4
		`  name = "x" # a = b`,     // 5
		`  list = [`,               // 6
		`    "a", # [not.a.table]`, // 7
		`    '''`,                  // 8
		`fake2 = 2'''`,             // 9
		`  ]`,                      // 10
		`[[partition]]`,            // 11
		`name = "p0"`,              // 12
		`[[partition]]`,            // 13
		"name = 'p1'\r",            // 14
		`[partition.sub]`,          // 15
		`deep.er = 1`,              // 16
		`"quoted key" = { a = 1, "b" = [ { c = 2 }, { c = 3 } ] }`, // 17
		`str = "has \" quote = and [ bracket"`,                     // 18
		`after = 1`,                                                // 19
	}, "\n")
	p := scanPositions(doc)
	tests := []struct {
		path      []string
		line, col int
	}{
		{[]string{"top"}, 1, 1},
		{[]string{"cluster"}, 4, 1},
		{[]string{"cluster", "name"}, 5, 3},
		{[]string{"cluster", "list"}, 6, 3},
		{[]string{"partition"}, 11, 1},
		{[]string{"partition", "#0"}, 11, 1},
		{[]string{"partition", "#0", "name"}, 12, 1},
		{[]string{"partition", "#1"}, 13, 1},
		{[]string{"partition", "#1", "name"}, 14, 1},
		{[]string{"partition", "#1", "sub"}, 15, 1},
		{[]string{"partition", "#1", "sub", "deep", "er"}, 16, 1},
		{[]string{"partition", "#1", "sub", "quoted key", "a"}, 17, 18},
		{[]string{"partition", "#1", "sub", "quoted key", "b", "#1"}, 17, 44},
		{[]string{"partition", "#1", "sub", "quoted key", "b", "#1", "c"}, 17, 46},
		{[]string{"partition", "#1", "sub", "after"}, 19, 1},
		// Not in the document: the nearest ancestor.
		{[]string{"partition", "#1", "nope"}, 13, 1},
		{[]string{"partition", "#7", "name"}, 11, 1},
		{[]string{"nope"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.path, "."), func(t *testing.T) {
			got := p.find(tt.path)
			if got != (position{tt.line, tt.col}) {
				t.Errorf("find(%q) = %d:%d, want %d:%d", tt.path, got.line, got.col, tt.line, tt.col)
			}
		})
	}
	for _, fake := range []string{"fake", "fake2"} {
		for k := range p.at {
			if strings.HasSuffix(k, fake) {
				t.Errorf("key %q inside a string was indexed", k)
			}
		}
	}
}

// A byte order mark does not shift positions of the first line.
func TestScanPositionsBOM(t *testing.T) {
	p := scanPositions("\xef\xbb\xbfa = 1\nb = 2")
	if got := p.find([]string{"b"}); got != (position{2, 1}) {
		t.Errorf("b at %v", got)
	}
	if got := p.find([]string{"a"}); got.line != 1 {
		t.Errorf("a at %v", got)
	}
}
