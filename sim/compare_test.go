package sim

import (
	"slices"
	"testing"
)

func TestStartOrder(t *testing.T) {
	tests := []struct {
		name  string
		costs []float64
		want  []int
	}{
		{"costliest first", []float64{1, 0.5, 0.8, 0.9, 1.8}, []int{4, 0, 3, 2, 1}},
		{"ties keep variant order", []float64{1, 1, 2, 1}, []int{2, 0, 1, 3}},
		{"no cost counts as 1", []float64{0, 1.5, 0.5}, []int{1, 0, 2}},
		{"none", nil, []int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var vs []Variant
			for _, c := range tc.costs {
				vs = append(vs, Variant{Cost: c})
			}
			if got := startOrder(vs); !slices.Equal(got, tc.want) {
				t.Errorf("startOrder(%v) = %v, want %v", tc.costs, got, tc.want)
			}
		})
	}
}
