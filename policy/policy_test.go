package policy

import "testing"

func TestStrategyNames(t *testing.T) {
	for _, s := range []Strategy{Reserve, Lend, LendAndBorrow} {
		got, err := ParseStrategy(s.String())
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	for _, bad := range []string{"", "lend", "BORROW", "Strategy(3)"} {
		if _, err := ParseStrategy(bad); err == nil {
			t.Errorf("ParseStrategy(%q) took it", bad)
		}
	}
	if got := Strategy(7).String(); got != "Strategy(7)" {
		t.Errorf("Strategy(7).String() = %q", got)
	}
}
