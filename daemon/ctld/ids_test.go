package ctld

import (
	"net"
	"slices"
	"testing"

	"sharq/api"
)

func TestParseJobRef(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
		err      bool
	}{
		{"plain", "12", []string{"12.t"}, false},
		{"full", "12.t", []string{"12.t"}, false},
		{"array", "12[]", []string{"12[].t"}, false},
		{"subjob", "12[7].t", []string{"12[7].t"}, false},
		{"range", "12[2-4]", []string{"12[2].t", "12[3].t", "12[4].t"}, false},
		{"other cluster", "12.x", nil, true},
		{"zero", "0", nil, true},
		{"garbage", "abc", nil, true},
		{"bad range", "12[4-2]", nil, true},
		{"unbalanced", "12[3", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := parseJobRef(c.in, "t")
			if (err != nil) != c.err {
				t.Fatalf("err %v, want error %v", err, c.err)
			}
			if err == nil && !slices.Equal(r.ids("t"), c.want) {
				t.Fatalf("ids %v, want %v", r.ids("t"), c.want)
			}
		})
	}
}

func TestParseArrayIndices(t *testing.T) {
	cases := []struct {
		name, in string
		want     []int
		err      bool
	}{
		{"range", "0-3", []int{0, 1, 2, 3}, false},
		{"step", "1-9:4", []int{1, 5, 9}, false},
		{"single", "7", []int{7}, false},
		{"reversed", "5-1", nil, true},
		{"zero step", "1-5:0", nil, true},
		{"too many", "0-1000000", nil, true},
		{"negative", "-1-3", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseArrayIndices(c.in)
			if (err != nil) != c.err || (err == nil && !slices.Equal(got, c.want)) {
				t.Fatalf("got %v %v, want %v (error %v)", got, err, c.want, c.err)
			}
		})
	}
}

func FuzzParseJobRef(f *testing.F) {
	for _, s := range []string{"12", "12[]", "12[3-5].t", "1.t", "[", "9999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseJobRef(s, "t")
		if err != nil {
			return
		}
		if r.Array && r.Index >= 0 && r.RangeEnd-r.Index > 1<<20 {
			return // a huge range is the caller's to bound
		}
		for _, id := range r.ids("t") {
			if _, err := parseJobRef(id, "t"); err != nil {
				t.Fatalf("id %q from %q does not parse: %v", id, s, err)
			}
		}
	})
}

// rawCall writes line as is and reads one answer.
func rawCall(t *testing.T, sock, line string) *api.Response {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	var resp api.Response
	if err := api.NewDecoder(conn).Decode(&resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}
