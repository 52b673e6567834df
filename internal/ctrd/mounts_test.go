package ctrd

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	const info = `22 1 0:21 / /run rw,nosuid shared:5 - tmpfs tmpfs rw
30 22 0:25 / /run/sharq-local/a\040b rw - overlay overlay rw,lowerdir=/x
31 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw
bad line
`
	got := parseMountinfo(strings.NewReader(info))
	want := []mount{{"/run", "tmpfs"}, {"/run/sharq-local/a b", "overlay"}, {"/sys/fs/cgroup", "cgroup2"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parseMountinfo = %v, want %v", got, want)
	}
}

func TestUnescapeMount(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "/run/x", "/run/x"},
		{"space", `/a\040b`, "/a b"},
		{"tab and backslash", `/a\011\134`, "/a\t\\"},
		{"tab inside, backslash", `/tab\011x\134`, "/tab\tx\\"},
		{"not octal", `/a\09x`, `/a\09x`},
		{"not octal at the end", `/bad\09`, `/bad\09`},
		{"too short", `/a\04`, `/a\04`},
		{"over a byte", `/a\777b`, `/a\777b`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := unescapeMount(tc.in); got != tc.want {
				t.Errorf("unescapeMount(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
