package noded

import (
	"strings"
	"testing"
)

func TestParseMemTotal(t *testing.T) {
	cases := []struct {
		name, in string
		want     int64
		wantErr  bool
	}{
		{name: "proc format", in: "MemTotal:       16318864 kB\nMemFree:  1 kB\n", want: 16318864 * 1024},
		{name: "not first", in: "Foo: 1 kB\nMemTotal: 2 kB\n", want: 2048},
		{name: "missing", in: "MemFree: 1 kB\n", wantErr: true},
		{name: "no unit", in: "MemTotal: 5\n", wantErr: true},
		{name: "not a number", in: "MemTotal: x kB\n", wantErr: true},
		{name: "negative", in: "MemTotal: -5 kB\n", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseMemTotal(strings.NewReader(c.in))
			if (err != nil) != c.wantErr || got != c.want {
				t.Fatalf("parseMemTotal = %d, %v; want %d, err %v", got, err, c.want, c.wantErr)
			}
		})
	}
}

func FuzzParseMemTotal(f *testing.F) {
	f.Add("MemTotal:       16318864 kB\n")
	f.Add("MemTotal: 9007199254740993 kB\n")
	f.Add("x\nMemTotal: 1 kB")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseMemTotal(strings.NewReader(s))
		if err == nil && (n < 0 || n%1024 != 0) {
			t.Fatalf("parseMemTotal(%q) = %d", s, n)
		}
	})
}
