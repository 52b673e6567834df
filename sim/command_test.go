package sim

import (
	"reflect"
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
