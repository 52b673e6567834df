package conf

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestWarnings(t *testing.T) {
	tests := []struct {
		name, share string
		want        string // "" for no warning
	}{
		{"rounds to zero", "gpus = 3\nstrategy = \"LEND_AND_BORROW\"\nborrow_limit = 20\n",
			`<config>:15:1: share "s": borrow_limit: 20% of 3 GPUs rounds down to 0 borrowable GPUs (the share may borrow floor(gpus*borrow_limit/100))`},
		{"one GPU", "gpus = 5\nstrategy = \"LEND_AND_BORROW\"\nborrow_limit = 20\n", ""},
		{"zero limit is meant", "gpus = 3\nstrategy = \"LEND_AND_BORROW\"\nborrow_limit = 0\n", ""},
		{"no limit", "gpus = 0\nstrategy = \"LEND_AND_BORROW\"\nborrow_limit = -1\n", ""},
		{"fair keys with fair share", "fair_weight = 3\nfair_share_users = true\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := "[cluster]\nname = \"w\"\n\n[[partition]]\nname = \"gpu\"\nnodes = \"n1\"\n\n[[node]]\nnames = \"n1\"\ngpus = 8\n\n[[share]]\nname = \"s\"\nusers = [\"*\"]\n" + tc.share
			// The share block starts at line 12: gpus, strategy, borrow_limit follow.
			data = strings.Replace(data, "[[share]]\nname = \"s\"\nusers = [\"*\"]\n"+tc.share, "[[share]]\n"+tc.share+"name = \"s\"\nusers = [\"*\"]\n", 1)
			c, err := Parse("", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if len(c.Warnings) > 0 {
				got = c.Warnings[0].Error()
			}
			if len(c.Warnings) > 1 || got != tc.want {
				t.Fatalf("warnings %v, want %q", c.Warnings, tc.want)
			}
		})
	}
}

// TestFairKeysWarnWithoutFairShare: fair_weight and fair_share_users do
// nothing with [scheduler] fair_share = false, which loads with a warning.
func TestFairKeysWarnWithoutFairShare(t *testing.T) {
	for _, fair := range []bool{true, false} {
		data := fmt.Sprintf("[cluster]\nname = \"w\"\n[scheduler]\nfair_share = %v\n[[partition]]\nname = \"gpu\"\nnodes = \"n1\"\n"+
			"[[node]]\nnames = \"n1\"\ngpus = 8\n[[share]]\nname = \"s\"\nusers = [\"*\"]\nfair_weight = 3\nfair_share_users = true\n", fair)
		c, err := Parse("", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{}
		if !fair {
			want = []string{
				`<config>:14:1: share "s": fair_weight: has no effect: [scheduler] fair_share is false`,
				`<config>:15:1: share "s": fair_share_users: has no effect: [scheduler] fair_share is false`,
			}
		}
		got := []string{}
		for _, w := range c.Warnings {
			got = append(got, w.Error())
		}
		if !slices.Equal(got, want) {
			t.Errorf("fair_share = %v: warnings %q, want %q", fair, got, want)
		}
	}
}
