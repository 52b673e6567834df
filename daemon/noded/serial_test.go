package noded

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestSerialOrderPerKey(t *testing.T) {
	s := newSerial()
	var mu sync.Mutex
	got := map[string][]int{}
	running := map[string]bool{}
	for i := range 200 {
		key := fmt.Sprintf("job%d", i%5)
		s.Do(key, func() {
			mu.Lock()
			if running[key] {
				t.Errorf("two functions of %s at once", key)
			}
			running[key] = true
			mu.Unlock()
			mu.Lock()
			got[key] = append(got[key], i)
			running[key] = false
			mu.Unlock()
		})
	}
	s.Wait()
	for k, seq := range got {
		if !slices.IsSorted(seq) || len(seq) != 40 {
			t.Errorf("%s ran %v", k, seq)
		}
	}
}
