package jobid

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want ID
		err  bool
	}{
		{"0", ID{}, false},
		{"123.lab", ID{Seq: 123, Server: "lab"}, false},
		{"123[].lab", ID{Seq: 123, Kind: Array, Server: "lab"}, false},
		{"123[7]", ID{Seq: 123, Kind: Sub, Index: 7}, false},
		{"9223372036854775807.a.b", ID{Seq: MaxSeq, Server: "a.b"}, false},
		{"9223372036854775808", ID{}, true},
		{"012", ID{}, true},
		{"12[03]", ID{}, true},
		{"12[-1]", ID{}, true},
		{"12[3", ID{}, true},
		{"12.", ID{}, true},
		{"12.la[b]", ID{}, true},
		{" 12", ID{}, true},
		{"", ID{}, true},
		{strings.Repeat("1", 300), ID{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if (err != nil) != tt.err || (err != nil && !errors.Is(err, ErrBadID)) {
				t.Fatalf("Parse(%q) err = %v, want error %v", tt.in, err, tt.err)
			}
			if err == nil && (got != tt.want || got.String() != tt.in) {
				t.Fatalf("Parse(%q) = %+v (%s), want %+v", tt.in, got, got, tt.want)
			}
		})
	}
}

func TestRange(t *testing.T) {
	tests := []struct {
		in  string
		len int
		err string
	}{
		{"7", 1, ""},
		{"0-99", 100, ""},
		{"0-99:2", 50, ""},
		{"0-16777216", MaxIndex + 1, ""},
		// Once an overflow of (hi-lo)/step+1 that crashed the controller.
		{"0-9223372036854775807", 0, "above"},
		{"0-99999999999999999999", 0, "above"},
		{"5-1", 0, "start is after end"},
		{"1-9:0", 0, "step"},
		{"1:2", 0, "needs a range"},
		{"+1-2", 0, "not a decimal"},
		{"", 0, "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRange(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrBadRange) {
					t.Fatalf("ParseRange(%q) = %v, %v; want error with %q", tt.in, r, err, tt.err)
				}
				return
			}
			if err != nil || r.Len() != tt.len || r.String() != tt.in {
				t.Fatalf("ParseRange(%q) = %v (len %d), %v; want len %d", tt.in, r, r.Len(), err, tt.len)
			}
		})
	}
	if _, err := ParseIndices("0-100000"); err == nil {
		t.Fatal("ParseIndices accepted 100,001 subjobs")
	}
}

func TestParseArray(t *testing.T) {
	tests := []struct {
		in   string
		want ArraySpec
		err  string
	}{
		{"0-99", ArraySpec{Range{0, 99, 1}, 0}, ""},
		{"1-100:2%10", ArraySpec{Range{1, 100, 2}, 10}, ""},
		{"10", ArraySpec{}, "want start-end"},
		{"9-1", ArraySpec{}, "start is after end"},
		{"0-9%0", ArraySpec{}, "%max"},
		{"0-99999999999", ArraySpec{}, "too large"},
		{"0-200000", ArraySpec{}, "more than 100000"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseArray(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseArray(%q) = %v, %v; want error with %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseArray(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestRefEach(t *testing.T) {
	arr := Range{0, 99, 3} // 0 3 6 ... 99
	tests := []struct {
		in   string
		want []int
	}{
		{"5[6]", []int{6}},
		{"5[7]", nil},
		{"5[0-10]", []int{0, 3, 6, 9}},
		{"5[0-12:6,99]", []int{0, 6, 12, 99}},
		// A selection far wider than the array walks only the array.
		{"5[0-16777216]", arr.Indices()},
		{"5[50-16777216:1000000]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRef(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			r.Each(arr, func(i int) { got = append(got, i) })
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Each = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		in     string
		id     string // of a Single ref, on server "t"
		expand []string
		err    bool
	}{
		{"12", "12.t", []string{"12"}, false},
		{"12.t", "12.t", []string{"12.t"}, false},
		{"12[]", "12[].t", []string{"12[]"}, false},
		{"12[7].t", "12[7].t", []string{"12[7].t"}, false},
		{"12[2-4]", "", []string{"12[2]", "12[3]", "12[4]"}, false},
		{"12[1,4,7-8]", "", []string{"12[1]", "12[4]", "12[7]", "12[8]"}, false},
		{"0", "", nil, true},
		{"abc", "", nil, true},
		{"12[4-2]", "", nil, true},
		{"12[3", "", nil, true},
		{"12[1--2]", "", nil, true},
		{"12.-x", "", nil, true},
		{"1[0-9223372036854775806]", "", nil, true},
		{"1[" + strings.Repeat("1,", 64) + "1]", "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRef(tt.in)
			if (err != nil) != tt.err {
				t.Fatalf("ParseRef(%q) err = %v, want error %v", tt.in, err, tt.err)
			}
			if err != nil {
				return
			}
			if _, single := r.Single(); single != (tt.id != "") || (single && r.ID("t") != tt.id) {
				t.Fatalf("Single/ID = %v %q, want %q", single, r.ID("t"), tt.id)
			}
			got, err := r.Expand(1000)
			if err != nil || !slices.Equal(got, tt.expand) {
				t.Fatalf("Expand = %v, %v; want %v", got, err, tt.expand)
			}
		})
	}
	r, _ := ParseRef("1[0-16777216]")
	if _, err := r.Expand(MaxArraySize); !errors.Is(err, ErrBadRange) {
		t.Fatalf("Expand of 16M subjobs: %v", err)
	}
}

func TestSplitSub(t *testing.T) {
	tests := []struct {
		in, arr string
		idx     int
		ok      bool
	}{
		{"12[7].t", "12[].t", 7, true},
		{"12[0]", "12[]", 0, true},
		{"12[].t", "", 0, false},
		{"12.t", "", 0, false},
		{"12[07].t", "", 0, false},
		{"12[99999999999999999999].t", "", 0, false},
	}
	for _, tt := range tests {
		arr, idx, ok := SplitSub(tt.in)
		if arr != tt.arr || idx != tt.idx || ok != tt.ok {
			t.Errorf("SplitSub(%q) = %q %d %v", tt.in, arr, idx, ok)
		}
		if ok && SubOf(arr, idx) != tt.in {
			t.Errorf("SubOf(%q, %d) = %q", arr, idx, SubOf(arr, idx))
		}
	}
}

func TestParseDepend(t *testing.T) {
	tests := []struct {
		in   string
		want string // FormatDepend of the result
		err  string
	}{
		{"afterok:1:2.lab,afterany:3[]", "afterok:1:2.lab,afterany:3[]", ""},
		{"AfterOK:5,afterok:5", "afterok:5", ""},
		{"after:4[7].lab", "after:4[7].lab", ""},
		{"", "", "empty"},
		{"afterok", "", "names no job"},
		{"afterok:1[2-3]", "", "is not a job id"},
		{"before:1", "", "not supported"},
		{"whenever:1", "", "unknown type"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDepend(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrBadDepend) {
					t.Fatalf("ParseDepend(%q) = %v, %v; want error with %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || FormatDepend(got) != tt.want {
				t.Fatalf("ParseDepend(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}
