package conf

import (
	"strings"
	"testing"
)

func TestParseMount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mount
		err  string // part of the error; "" = valid
	}{
		{"/home", Mount{Path: "/home"}, ""},
		{"/datasets:ro", Mount{Path: "/datasets", ReadOnly: true}, ""},
		{"/scratch:rw", Mount{Path: "/scratch"}, ""},
		{"/devices", Mount{Path: "/devices"}, ""},
		{"/proc", Mount{}, "belongs to the job container"},
		{"/sys/fs", Mount{}, "belongs to the job container"},
		{"/dev/shm", Mount{}, "belongs to the job container"},
		{"relative", Mount{}, "not an absolute path"},
		{"", Mount{}, "empty path"},
		{":ro", Mount{}, "empty path"},
		{"/", Mount{}, "hide the job's own root"},
		{"/a/", Mount{}, `write the path as "/a"`},
		{"/a//b", Mount{}, `write the path as "/a/b"`},
		{"/a:ro:ro", Mount{}, "unknown mode"},
		{"/a:RO", Mount{}, "unknown mode"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			m, err := ParseMount(tc.in)
			if tc.err == "" {
				if err != nil || m != tc.want {
					t.Fatalf("ParseMount(%q) = %v, %v; want %v", tc.in, m, err, tc.want)
				}
				if back, err := ParseMount(m.String()); err != nil || back != m {
					t.Errorf("round trip of %v: %v, %v", m, back, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("ParseMount(%q) = %v, %v; want an error with %q", tc.in, m, err, tc.err)
			}
		})
	}
}

// FuzzParseMount: a mount ParseMount accepts is absolute, clean, outside
// the container's own directories, and prints back to itself.
func FuzzParseMount(f *testing.F) {
	for _, s := range []string{"/home", "/d:ro", "/proc/x", "a", "/a/../b", "/x:rw", "/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMount(s)
		if err != nil {
			return
		}
		if m.Path == "/" || m.Path[0] != '/' || strings.HasPrefix(m.Path+"/", "/proc/") ||
			strings.HasPrefix(m.Path+"/", "/sys/") || strings.HasPrefix(m.Path+"/", "/dev/") {
			t.Fatalf("ParseMount(%q) accepted %v", s, m)
		}
		if back, err := ParseMount(m.String()); err != nil || back != m {
			t.Fatalf("round trip of %q: %v, %v", s, back, err)
		}
	})
}
