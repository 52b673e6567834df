package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testNow is the clock of every test: Sunday 1 March 2026, 12:00 UTC.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// recorder is the controller round-trip of a test: it records the requests
// and answers each with reply (a plain success by default).
type recorder struct {
	reqs  []api.Request
	reply func(api.Request) (*api.Response, error)
}

func (r *recorder) call(_ context.Context, req api.Request) (*api.Response, error) {
	r.reqs = append(r.reqs, req)
	if r.reply == nil {
		return &api.Response{V: api.Version}, nil
	}
	resp, err := r.reply(req)
	if resp != nil && req.Stat != nil && req.Stat.Summary {
		// What the controller does for a summary listing.
		var b []byte
		for i := range resp.Jobs {
			b = api.AppendSummary(b, &resp.Jobs[i])
		}
		summary := *resp
		summary.Jobs, summary.Summary = nil, b
		resp = &summary
	}
	return resp, err
}

// refuse answers like client.Call does when the controller refused.
func refuse(resp *api.Response) (*api.Response, error) {
	resp.V = api.Version
	return resp, resp.Error
}

type testSys struct {
	*Sys
	out, err *bytes.Buffer
	rec      *recorder
}

func newTestSys(t *testing.T) *testSys {
	t.Helper()
	rec := &recorder{}
	out, errb := &bytes.Buffer{}, &bytes.Buffer{}
	return &testSys{
		Sys: &Sys{
			Stdin:    strings.NewReader(""),
			Stdout:   out,
			Stderr:   errb,
			Environ:  []string{"HOME=/home/alice", "LOGNAME=alice", "PATH=/usr/bin:/bin", "SHELL=/bin/bash", "LANG=C.UTF-8", "CUDA_HOME=/opt/cuda"},
			Dir:      t.TempDir(),
			Host:     "login1",
			Now:      func() time.Time { return testNow },
			Location: time.UTC,
			Call:     rec.call,
		},
		out: out, err: errb, rec: rec,
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test ./cli -update rewrites it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// indices is an array's indices as qsub -J gives them ("0-99:2").
func indices(s string) jobid.Range {
	r, err := jobid.ParseIndices(s)
	if err != nil {
		panic(err)
	}
	return r
}
