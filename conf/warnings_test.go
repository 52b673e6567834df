package conf

import (
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
