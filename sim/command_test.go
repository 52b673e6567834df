package sim

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestFlagsFirst(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"simulate untouched", []string{"sharq-sim", "--config", "c.toml", "--trace", "import-itp"},
			[]string{"sharq-sim", "--config", "c.toml", "--trace", "import-itp"}},
		{"flags after file", []string{"sharq-sim", "import-itp", "raw.csv.gz", "-o", "out.csv.gz", "--gpus", "64"},
			[]string{"sharq-sim", "import-itp", "-o", "out.csv.gz", "--gpus", "64", "--", "raw.csv.gz"}},
		{"flags first already", []string{"sharq-sim", "import-itp", "--output=x.csv", "raw.csv"},
			[]string{"sharq-sim", "import-itp", "--output=x.csv", "--", "raw.csv"}},
		{"stdin dash is an argument", []string{"sharq-sim", "import-itp", "-", "-o", "y"},
			[]string{"sharq-sim", "import-itp", "-o", "y", "--", "-"}},
		{"after --", []string{"sharq-sim", "import-itp", "--", "-odd-name"},
			[]string{"sharq-sim", "import-itp", "--", "-odd-name"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := flagsFirst(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("flagsFirst(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestCommandCompare runs sharq-sim --compare on a small trace: the table
// has a column for every configuration of Variants and a row for each
// figure.
func TestCommandCompare(t *testing.T) {
	var out bytes.Buffer
	args := []string{"sharq-sim", "--config", "testdata/compare/cluster.toml", "--trace", "testdata/compare/trace.csv", "--compare"}
	if err := newApp(&out).Run(flagsFirst(args)); err != nil {
		t.Fatal(err)
	}
	cl, err := LoadCluster("testdata/compare/cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	head := lines[0]
	vs := Variants(cl)
	if len(vs) != 5 {
		t.Errorf("%d configurations, want 5", len(vs))
	}
	last := -1
	for _, v := range vs {
		i := strings.Index(head, v.Name)
		if i <= last {
			t.Errorf("header %q lacks %q after the previous configuration", head, v.Name)
		}
		last = i
	}
	for _, row := range []string{"utilization", "useful / bound", "p95 wait 1 GPU", "p95 wait 2-8 GPUs", "p95 wait 9-32 GPUs", "p95 wait >32 GPUs",
		"slowdown p50", "slowdown p95", "Jain borrowers", "Jain contending, daily", "p95 wait a", "slowdown p50/p95 c"} {
		found := false
		for _, l := range lines[1:] {
			if f := strings.Fields(strings.TrimSpace(strings.Replace(l, row, "ROW", 1))); strings.HasPrefix(strings.TrimSpace(l), row) &&
				len(f) >= 1+len(vs) && f[0] == "ROW" {
				found = true
			}
		}
		if !found {
			t.Errorf("no row %q with %d values:\n%s", row, len(vs), out.String())
		}
	}
}
