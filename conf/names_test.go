package conf

import (
	"regexp"
	"strings"
	"testing"
)

// TestNameChecksMatchTheirPatterns checks the hand-written name checks
// against the regular expressions they stand for, on chosen and generated
// names.
func TestNameChecksMatchTheirPatterns(t *testing.T) {
	checks := []struct {
		name string
		re   *regexp.Regexp
		fn   func(string) bool
	}{
		{"name", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`), validName},
		{"host", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,252}$`), validHost},
		{"cluster", regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`), validClusterName},
	}
	inputs := []string{"", "a", "A", "0", "-a", "_a", ".a", "a-b", "a_b", "a.b", "a b", "a/b", "Lab", "lab-1",
		"é", "a\x00", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253), strings.Repeat("a", 254)}
	alphabet := "aZ0-_./ é"
	for i := range 2000 {
		var b strings.Builder
		for k := i; k > 0; k /= len(alphabet) {
			b.WriteByte(alphabet[k%len(alphabet)])
		}
		inputs = append(inputs, b.String())
	}
	for _, c := range checks {
		for _, s := range inputs {
			if got, want := c.fn(s), c.re.MatchString(s); got != want {
				t.Errorf("%s check of %q = %v, the pattern says %v", c.name, s, got, want)
			}
		}
	}
}
