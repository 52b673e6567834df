package ctrd

import (
	"fmt"
	"strings"
	"testing"
)

func TestCharMajors(t *testing.T) {
	const devices = `Character devices:
  1 mem
 60 local
195 nvidia
bad

Block devices:
 61 blk
`
	got, err := charMajors(strings.NewReader(devices))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[uint32]bool{1: true, 60: true, 195: true}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("charMajors = %v, want %v (block majors left out)", got, want)
	}
}
