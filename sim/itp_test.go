package sim

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// itpPath is the ITP trace, in shared/ beside the repository.
const itpPath = "../../shared/traces/itp/itp_raw_all_clusters.csv.gz"

// itpHead returns the header and the first n rows of the ITP trace.
func itpHead(t testing.TB, n int) []byte {
	t.Helper()
	f, err := os.Open(itpPath)
	if err != nil {
		t.Fatalf("the ITP trace must be in shared/ beside the repository: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	sc := bufio.NewScanner(zr)
	for i := 0; i <= n && sc.Scan(); i++ {
		b.Write(sc.Bytes())
		b.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadITPHead(t *testing.T) {
	const rows = 3000
	raw := itpHead(t, rows)
	jobs, err := ReadITP(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != rows {
		t.Fatalf("%d jobs, want %d", len(jobs), rows)
	}
	// The file's first row: cluster01,965d744f-...,1932025,2429,64.
	var first *TraceJob
	for i := range jobs {
		if jobs[i].Line == 2 {
			first = &jobs[i]
		}
		if i > 0 && jobs[i].Submit < jobs[i-1].Submit {
			t.Fatalf("not sorted at %d", i)
		}
		if j := jobs[i]; j.Priority != ITPPriority || j.GPUs > ITPNodeGPUs || (j.Nodes > 1 && j.GPUs != ITPNodeGPUs) {
			t.Errorf("job %+v", j)
		}
	}
	want := TraceJob{Line: 2, Submit: 1932025 * time.Second, ID: "965d744f-0445-c1a8-12af-97e4c536c66e", Share: "cluster01",
		Priority: ITPPriority, GPUs: 8, Nodes: 8, Duration: 2429 * time.Second, Grace: -1}
	if first == nil || *first != want {
		t.Errorf("first row = %+v, want %+v", first, want)
	}
	// The converted trace reads back as the same jobs.
	if back := roundTripTrace(t, jobs); !reflect.DeepEqual(back, jobs) {
		t.Error("EncodeTrace/DecodeTrace changed the ITP jobs")
	}
	// Gzipped input gives the same.
	again, err := ReadITP(bytes.NewReader(gz(t, string(raw))))
	if err != nil || !reflect.DeepEqual(again, jobs) {
		t.Errorf("gzipped: %v", err)
	}
}

func TestReadITPErrors(t *testing.T) {
	const hdr = "cluster,job_id,submission_time,duration,num_gpu\n"
	tests := []struct {
		name  string
		input string
		want  error
		line  int
	}{
		{"missing column", "cluster,job_id,submission_time,duration\nc,j,1,2\n", ErrMissingColumn, 1},
		{"bad number", hdr + "c,j1,1,2,1\nc,j2,x,2,1\n", ErrBadNumber, 3},
		{"12 GPUs", hdr + "c,j1,1,2,12\n", ErrOutOfRange, 2},
		{"zero duration", hdr + "c,j1,1,0,1\n", ErrOutOfRange, 2},
		{"duplicate", hdr + "c,j1,1,2,1\nd,j1,1,2,1\n", ErrDuplicateJob, 3},
		{"empty cluster", hdr + ",j1,1,2,1\n", ErrEmptyField, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadITP(strings.NewReader(tc.input))
			var te *TraceError
			if !errors.As(err, &te) || !errors.Is(err, tc.want) || te.Rows[0].Line != tc.line {
				t.Errorf("err = %v, want %v on line %d", err, tc.want, tc.line)
			}
		})
	}
}

func TestQuotas(t *testing.T) {
	tests := []struct {
		name  string
		hours []float64
		total int
		want  []int
	}{
		{"exact", []float64{1, 1, 2}, 8, []int{2, 2, 4}},
		{"largest remainder", []float64{1, 1, 1}, 10, []int{4, 3, 3}},
		{"remainders differ", []float64{10, 25, 65}, 7, []int{1, 2, 4}},
		{"no demand", []float64{0, 0}, 5, []int{0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := make([]ShareDemand, len(tc.hours))
			for i, h := range tc.hours {
				d[i].GPUHours = h
			}
			if got := Quotas(d, tc.total); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Quotas = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestITPConfigQuotas checks contrib/examples/itp.toml against the whole
// trace: quotas in proportion to demand, summing to the cluster's 1,280
// GPUs, and every share's largest job able to start under its strategy.
func TestITPConfigQuotas(t *testing.T) {
	f, err := os.Open(itpPath)
	if err != nil {
		t.Fatalf("the ITP trace must be in shared/ beside the repository: %v", err)
	}
	defer f.Close()
	jobs, err := ReadITP(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 69351 {
		t.Errorf("%d jobs, want 69351", len(jobs))
	}
	cl, err := LoadCluster("../contrib/examples/itp.toml")
	if err != nil {
		t.Fatal(err)
	}
	if cl.TotalGPUs() != 1280 || len(cl.Sched.Nodes) != 160 || cl.Sched.Partitions[0].PreemptGrace != time.Minute {
		t.Errorf("GPUs %d nodes %d grace %v", cl.TotalGPUs(), len(cl.Sched.Nodes), cl.Sched.Partitions[0].PreemptGrace)
	}
	demand := Demand(jobs)
	quotas := Quotas(demand, cl.TotalGPUs())
	if len(demand) != len(cl.Sched.Shares) {
		t.Fatalf("%d clusters in the trace, %d shares", len(demand), len(cl.Sched.Shares))
	}
	sum := 0
	for i, d := range demand {
		s := cl.share(d.Share)
		if s == nil {
			t.Fatalf("no share %s", d.Share)
		}
		sum += s.GPUs
		if s.GPUs != quotas[i] {
			t.Errorf("share %s: quota %d, demand gives %d", s.Name, s.GPUs, quotas[i])
		}
		reach := s.GPUs
		if s.Strategy == sched.LendAndBorrow {
			if s.BorrowLimit < 0 {
				reach = cl.TotalGPUs()
			} else {
				reach += s.GPUs * s.BorrowLimit / 100
			}
		}
		if d.MaxGPUs > reach {
			t.Errorf("share %s: a %d-GPU job can never start (reach %d)", s.Name, d.MaxGPUs, reach)
		}
	}
	if sum != 1280 {
		t.Errorf("quotas sum to %d", sum)
	}
}

// TestITPLendBorrowCopy: contrib/examples/itp-lend-borrow.toml is
// itp.toml with every share LEND_AND_BORROW; the shares that did not
// borrow there borrow up to 100% of their quota, the others keep their
// limits.
func TestITPLendBorrowCopy(t *testing.T) {
	orig, err := LoadCluster("../contrib/examples/itp.toml")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := LoadCluster("../contrib/examples/itp-lend-borrow.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := orig.clone()
	for i := range want.Sched.Shares {
		s := &want.Sched.Shares[i]
		if s.Strategy != sched.LendAndBorrow {
			s.Strategy, s.BorrowLimit = sched.LendAndBorrow, 100
		}
	}
	if !reflect.DeepEqual(lab, want) {
		t.Errorf("itp-lend-borrow.toml is not itp.toml with every share LEND_AND_BORROW:\n got  %+v\n want %+v", lab.Sched.Shares, want.Sched.Shares)
	}
}

// FuzzReadITP: the ITP reader never panics, every refusal carries its
// rows, and what it accepts is a valid trace: sorted by submission, within
// the trace's limits, and EncodeTrace/DecodeTrace read it back unchanged.
func FuzzReadITP(f *testing.F) {
	const head = "cluster,job_id,submission_time,duration,num_gpu\n"
	f.Add([]byte(head + "cluster01,965d744f-0445-c1a8-12af-97e4c536c66e,1932025,2429,64\ncluster02,b,0,1,1\n"))
	f.Add(gz(f, head+"c1,a,5,10,8\nc1,b,5,10,16\nc2,c,1,3,2\n"))
	f.Add([]byte("\uFEFFcluster , job_id,submission_time,duration,num_gpu,extra\nc1,a,0,1,12,x\nc1,a,0,1,1,y\n"))
	f.Add([]byte(head + "c1,a,-1,0,0\nc1,\"x\ny\",1,1,1\n,b,1,1,1\nc1,c,99999999999999999999,1,1\n"))
	f.Add([]byte("job_id,num_gpu\n1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := ReadITP(bytes.NewReader(data))
		if err != nil {
			var te *TraceError
			if errors.As(err, &te) && len(te.Rows) == 0 {
				t.Fatalf("TraceError without rows: %v", err)
			}
			return
		}
		ids := make(map[string]bool)
		for i, j := range jobs {
			if j.ID == "" || j.Share == "" || ids[j.ID] || j.GPUs < 1 || j.GPUs > ITPNodeGPUs || j.Nodes < 1 || j.Nodes > MaxNodes ||
				(j.Nodes > 1 && j.GPUs != ITPNodeGPUs) || j.Duration <= 0 || j.Submit < 0 || j.Priority != ITPPriority || j.Line < 2 {
				t.Fatalf("accepted an invalid job %+v", j)
			}
			if i > 0 && j.Submit < jobs[i-1].Submit {
				t.Fatalf("not sorted at %d: %v after %v", i, j.Submit, jobs[i-1].Submit)
			}
			ids[j.ID] = true
		}
		if back := roundTripTrace(t, jobs); !reflect.DeepEqual(back, jobs) {
			t.Fatalf("round trip:\n got  %+v\n want %+v", back, jobs)
		}
	})
}
