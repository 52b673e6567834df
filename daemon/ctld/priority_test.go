package ctld

import (
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

func TestPBSPriority(t *testing.T) {
	tests := []struct {
		name    string
		p, def  int
		want    int
		wantErr bool
	}{
		{"zero is the default", 0, 100, 100, false},
		{"one is above the default", 1, 100, 110, false}, // ceil(9899/1023)
		{"minus one is below the default", -1, 100, 99, false},
		{"top", 1023, 100, maxPriority, false},
		{"bottom", -1024, 100, 0, false},
		{"middle above", 512, 100, 100 + (512*9899+1022)/1023, false},
		{"default zero", -1, 0, 0, false},
		{"default at the top", 1, maxPriority, maxPriority, false},
		{"below PBS's range", -1025, 100, 0, true},
		{"above PBS's range", 1024, 100, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pbsPriority(tt.p, tt.def)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("pbsPriority(%d, %d) = %d, %v; want %d (error %v)", tt.p, tt.def, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestPBSPriorityKeepsOrder checks the map is monotone for every default and
// stays inside sharq's scale.
func TestPBSPriorityKeepsOrder(t *testing.T) {
	for _, def := range []int{0, 1, 50, 100, 1024, 5000, maxPriority - 1, maxPriority} {
		prev := -1
		for p := api.MinPBSPriority; p <= api.MaxPBSPriority; p++ {
			got, err := pbsPriority(p, def)
			if err != nil {
				t.Fatal(err)
			}
			if got < prev || got < 0 || got > maxPriority {
				t.Fatalf("default %d: PBS %d -> %d after %d", def, p, got, prev)
			}
			if (p < 0 && got > def) || (p > 0 && got < def) || (p == 0 && got != def) {
				t.Fatalf("default %d: PBS %d -> %d is on the wrong side", def, p, got)
			}
			prev = got
		}
	}
}
