package sim

import (
	"bytes"
	"compress/gzip"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const goodTrace = `# a comment line
submit_s,job,share,priority,gpus,duration_s,nodes,grace_s,checkpoint_s,walltime_s
0,j1,vision,100,2,3600,,,,3600
12.5,j2,nlp,5000,8,60.25,2,10,600,
12.5,"j,3",nlp,0,1,1e3,1,0,,86400.5
`

func TestDecodeTrace(t *testing.T) {
	want := []TraceJob{
		{Line: 3, Submit: 0, ID: "j1", Share: "vision", Priority: 100, GPUs: 2, Nodes: 1, Duration: time.Hour, Grace: -1, Walltime: time.Hour},
		{Line: 4, Submit: 12500 * time.Millisecond, ID: "j2", Share: "nlp", Priority: 5000, GPUs: 8, Nodes: 2,
			Duration: 60250 * time.Millisecond, Grace: 10 * time.Second, Checkpoint: 10 * time.Minute},
		{Line: 5, Submit: 12500 * time.Millisecond, ID: "j,3", Share: "nlp", Priority: 0, GPUs: 1, Nodes: 1, Duration: 1000 * time.Second, Grace: 0,
			Walltime: 24*time.Hour + 500*time.Millisecond},
	}
	tests := []struct {
		name  string
		input []byte
	}{
		{"plain", []byte(goodTrace)},
		{"gzipped", gz(t, goodTrace)},
		{"required columns only, reordered", []byte("job,share,submit_s,duration_s,gpus,priority\n# c\n\nj1,vision,0,3600,2,100\nj2,nlp,12.5,60.25,8,5000\n")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeTrace(bytes.NewReader(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			exp := want
			if strings.HasPrefix(tc.name, "required") {
				exp = []TraceJob{want[0], {Line: 5, Submit: 12500 * time.Millisecond, ID: "j2", Share: "nlp", Priority: 5000, GPUs: 8, Nodes: 1, Duration: 60250 * time.Millisecond, Grace: -1}}
				exp[0].Line = 4
				exp[0].Walltime = 0
			}
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("got  %+v\nwant %+v", got, exp)
			}
		})
	}
}

func TestDecodeTraceErrors(t *testing.T) {
	const hdr = "submit_s,job,share,priority,gpus,duration_s\n"
	const wallHdr = "submit_s,job,share,priority,gpus,duration_s,walltime_s\n"
	tests := []struct {
		name  string
		input string
		want  []error // sentinel of each reported row, in order
		lines []int
	}{
		{"missing column", "submit_s,job,share,priority,duration_s\n0,j1,a,1,10\n", []error{ErrMissingColumn}, []int{1}},
		{"unknown column", "submit_s,job,share,priority,gpus,duration_s,gpu_type\n0,j1,a,1,1,10,x\n", []error{ErrBadHeader}, []int{1}},
		{"bad number", hdr + "0,j1,a,1,1,10\nx,j2,a,1,1,10\n", []error{ErrBadNumber}, []int{3}},
		{"negative gpus", hdr + "0,j1,a,1,-2,10\n", []error{ErrOutOfRange}, []int{2}},
		{"zero duration", hdr + "0,j1,a,1,1,0\n", []error{ErrOutOfRange}, []int{2}},
		{"priority too high", hdr + "0,j1,a,10000,1,10\n", []error{ErrOutOfRange}, []int{2}},
		{"negative submit", hdr + "-1,j1,a,1,1,10\n", []error{ErrOutOfRange}, []int{2}},
		{"NaN duration", hdr + "0,j1,a,1,1,NaN\n", []error{ErrBadNumber}, []int{2}},
		{"empty job", hdr + "0,,a,1,1,10\n", []error{ErrEmptyField}, []int{2}},
		{"field count", hdr + "0,j1,a,1,1\n", []error{ErrFieldCount}, []int{2}},
		{"duplicate job", hdr + "0,j1,a,1,1,10\n1,j1,a,1,1,10\n", []error{ErrDuplicateJob}, []int{3}},
		{"every bad row", hdr + "0,j1,a,1,1,10\n0,j2,a,x,1,10\n# comment\n0,j3,a,1,0,10\n0,j4,a,1,1,-5\n",
			[]error{ErrBadNumber, ErrOutOfRange, ErrOutOfRange}, []int{3, 5, 6}},
		{"two errors on one row", hdr + "y,j1,a,1,1,z\n", []error{ErrBadNumber, ErrBadNumber}, []int{2, 2}},
		{"syntax", hdr + "0,\"j1,a,1,1,10\n", []error{ErrSyntax}, []int{2}},
		{"walltime below duration", wallHdr + "0,j1,a,1,1,10,9.5\n", []error{ErrOutOfRange}, []int{2}},
		{"zero walltime", wallHdr + "0,j1,a,1,1,10,0\n", []error{ErrOutOfRange}, []int{2}},
		{"negative walltime", wallHdr + "0,j1,a,1,1,10,-3600\n", []error{ErrOutOfRange}, []int{2}},
		{"bad walltime", wallHdr + "0,j1,a,1,1,10,01:00:00\n0,j2,a,1,1,10,1e99\n0,j3,a,1,1,10,NaN\n",
			[]error{ErrBadNumber, ErrOutOfRange, ErrBadNumber}, []int{2, 3, 4}},
		{"walltime twice", "submit_s,job,share,priority,gpus,duration_s,walltime_s,walltime_s\n0,j1,a,1,1,10,20,20\n", []error{ErrBadHeader}, []int{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeTrace(strings.NewReader(tc.input))
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want *TraceError", err)
			}
			if len(te.Rows) != len(tc.want) {
				t.Fatalf("got %d rows: %v", len(te.Rows), err)
			}
			for i, r := range te.Rows {
				if !errors.Is(r, tc.want[i]) || r.Line != tc.lines[i] {
					t.Errorf("row %d: got %v (line %d), want %v on line %d", i, r, r.Line, tc.want[i], tc.lines[i])
				}
				if !errors.Is(err, tc.want[i]) {
					t.Errorf("errors.Is(err, %v) = false", tc.want[i])
				}
			}
		})
	}
}

func TestDecodeTraceErrorCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("submit_s,job,share,priority,gpus,duration_s\n")
	for i := range MaxRowErrors + 7 {
		b.WriteString("0,j" + string(rune('a'+i%26)) + ",a,1,-1,10\n")
	}
	_, err := DecodeTrace(strings.NewReader(b.String()))
	var te *TraceError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v", err)
	}
	if len(te.Rows) != MaxRowErrors || te.Omitted != 7 {
		t.Errorf("rows %d omitted %d, want %d and 7", len(te.Rows), te.Omitted, MaxRowErrors)
	}
	if !strings.Contains(err.Error(), "and 7 more") || !strings.Contains(err.Error(), "line 2: gpus:") {
		t.Errorf("message: %s", err)
	}
}

func TestDecodeTraceEmpty(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  error
	}{
		{"no input", "", ErrBadHeader},
		{"header only", "submit_s,job,share,priority,gpus,duration_s\n", ErrEmptyTrace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeTrace(strings.NewReader(tc.input)); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestValidateTraceUnknownShare(t *testing.T) {
	cl := Cluster{Sched: sched.Config{Shares: []sched.Share{{Name: "a"}}}}
	jobs, err := DecodeTrace(strings.NewReader("submit_s,job,share,priority,gpus,duration_s\n0,j1,a,1,1,10\n0,j2,b,1,1,10\n0,j3,c,1,1,10\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = ValidateTrace(&cl, jobs)
	var te *TraceError
	if !errors.As(err, &te) || !errors.Is(err, ErrUnknownShare) {
		t.Fatalf("err = %v", err)
	}
	if len(te.Rows) != 2 || te.Rows[0].Line != 3 || te.Rows[1].Line != 4 {
		t.Errorf("rows = %v", te.Rows)
	}
}

func TestSeconds(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  error
	}{
		{"0", 0, nil},
		{"12.5", 12500 * time.Millisecond, nil},
		{".5", 500 * time.Millisecond, nil},
		{"5.", 5 * time.Second, nil},
		{"5175336.123456789", 5175336*time.Second + 123456789, nil},
		{"1.0000000009", time.Second, nil}, // below the nanosecond: dropped
		{"1e3", 1000 * time.Second, nil},
		{"1e12", 0, ErrOutOfRange},
		{"-1", 0, ErrOutOfRange},
		{"abc", 0, ErrBadNumber},
		{"Inf", 0, ErrBadNumber},
		{".", 0, ErrBadNumber},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseSeconds(tc.in)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("parseSeconds(%q) = %v, %v; want %v, %v", tc.in, got, err, tc.want, tc.err)
			}
			if tc.err == nil {
				back, err := parseSeconds(FormatSeconds(got))
				if err != nil || back != got {
					t.Errorf("round trip via %q: %v, %v", FormatSeconds(got), back, err)
				}
			}
		})
	}
}

func TestEncodeTraceRoundTrip(t *testing.T) {
	jobs, err := DecodeTrace(strings.NewReader(goodTrace))
	if err != nil {
		t.Fatal(err)
	}
	if back := roundTripTrace(t, jobs); !reflect.DeepEqual(back, jobs) {
		t.Errorf("got  %+v\nwant %+v", back, jobs)
	}
}

// roundTripTrace writes jobs with EncodeTrace and reads them back with
// DecodeTrace, keeping each job's Line (the file's own line numbers differ).
func roundTripTrace(t testing.TB, jobs []TraceJob) []TraceJob {
	t.Helper()
	var b bytes.Buffer
	if err := EncodeTrace(&b, jobs); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeTrace(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("re-decoding: %v\n%s", err, b.String())
	}
	for i := range back {
		back[i].Line = jobs[i].Line
	}
	return back
}

// FuzzTrace checks that the decoder never panics, that what it accepts is
// within the documented limits, and that EncodeTrace writes it back
// exactly.
func FuzzTrace(f *testing.F) {
	f.Add([]byte(goodTrace))
	f.Add(gz(f, goodTrace))
	f.Add([]byte("submit_s,job,share,priority,gpus,duration_s\n0,j1,a,1,-2,10\nx,j2,a,1,1,10\n"))
	f.Add([]byte("job,share,submit_s,duration_s,gpus,priority,checkpoint_s\n\"a\"\"b\",s,1e2,.5,3,9999,7\n"))
	f.Add([]byte("walltime_s,submit_s,job,share,priority,gpus,duration_s\n3600,0,j1,a,1,1,3600\n3599.999,0,j2,a,1,1,3600\n,0,j3,a,1,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := DecodeTrace(bytes.NewReader(data))
		if err != nil {
			var te *TraceError
			if errors.As(err, &te) && len(te.Rows) == 0 {
				t.Fatalf("TraceError without rows")
			}
			return
		}
		ids := make(map[string]bool)
		for _, j := range jobs {
			if j.ID == "" || j.Share == "" || ids[j.ID] || j.GPUs < 1 || j.Nodes < 1 || j.Duration <= 0 ||
				j.Submit < 0 || j.Priority < 0 || j.Priority > MaxPriority || j.Checkpoint < 0 || j.Line < 1 ||
				(j.Walltime != 0 && j.Walltime < j.Duration) || j.Walltime < 0 {
				t.Fatalf("accepted an invalid job %+v", j)
			}
			ids[j.ID] = true
		}
		if back := roundTripTrace(t, jobs); !reflect.DeepEqual(back, jobs) {
			t.Fatalf("round trip:\n got  %+v\n want %+v", back, jobs)
		}
	})
}
