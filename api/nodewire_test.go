package api

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNodeWireEnums(t *testing.T) {
	cases := []struct {
		name, msg string
		ok        bool
	}{
		{"running", `{"job_id":"1.t","state":"running"}`, true},
		{"exited", `{"job_id":"1.t","state":"exited"}`, true},
		{"failed", `{"job_id":"1.t","state":"failed"}`, true},
		{"unknown state", `{"job_id":"1.t","state":"finished"}`, false},
		{"state in capitals", `{"job_id":"1.t","state":"RUNNING"}`, false},
		{"empty state", `{"job_id":"1.t","state":""}`, false},
		{"state not a string", `{"job_id":"1.t","state":1}`, false},
	}
	for _, c := range cases {
		t.Run("state/"+c.name, func(t *testing.T) {
			var m JobStateMsg
			err := json.Unmarshal([]byte(c.msg), &m)
			if (err == nil) != c.ok {
				t.Fatalf("decode %s: %v", c.msg, err)
			}
		})
	}
	reasons := []struct {
		in string
		ok bool
	}{{"deleted", true}, {"preempted", true}, {"failed", true}, {"walltime", true}, {"unknown", true}, {"lease", true}, {"", true},
		{"another node of the job failed", false}, {"Deleted", false}}
	for _, c := range reasons {
		t.Run("reason/"+c.in, func(t *testing.T) {
			var o StopOrder
			err := json.Unmarshal([]byte(`{"job_id":"1.t","reason":"`+c.in+`"}`), &o)
			if (err == nil) != c.ok || (c.ok && string(o.Reason) != c.in) {
				t.Fatalf("decode %q: %q %v", c.in, o.Reason, err)
			}
		})
	}
	codes := []struct{ in, want string }{{"bad_secret", "bad_secret"}, {"unknown_node", "unknown_node"},
		{"bad_version", "bad_version"}, {"bad_cert", "bad_cert"}, {"refused", "refused"}, {"", ""}, {"quota", "refused"}, {"secret", "refused"}, {"cert", "refused"}}
	for _, c := range codes {
		t.Run("code/"+c.in, func(t *testing.T) {
			var m NodeMsg
			if err := json.Unmarshal([]byte(`{"type":"welcome","code":"`+c.in+`"}`), &m); err != nil || string(m.Code) != c.want {
				t.Fatalf("decode %q: %q %v, want %q", c.in, m.Code, err, c.want)
			}
		})
	}
}

// FuzzNodeWireEnums: each decoder yields one of its constants or an
// error, and what it yields encodes back to itself.
func FuzzNodeWireEnums(f *testing.F) {
	for _, s := range []string{"running", "exited", "failed", "deleted", "walltime", "lease", "bad_secret", "bad_cert", "", "x", "secret", "path"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, _ := json.Marshal(s)
		var st RunState
		if err := json.Unmarshal(b, &st); err == nil {
			if st != RunRunning && st != RunExited && st != RunFailed {
				t.Fatalf("state %q decoded to %q", s, st)
			}
		} else if !strings.Contains(err.Error(), "job state") {
			t.Fatalf("state error %v does not say what", err)
		}
		var r StopReason
		if err := json.Unmarshal(b, &r); err == nil {
			switch r {
			case StopDeleted, StopPreempted, StopFailed, StopWalltime, StopUnknown, StopLease, StopNone:
			default:
				t.Fatalf("reason %q decoded to %q", s, r)
			}
		}
		var c RefusalCode
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("code %q: %v", s, err)
		}
		switch c {
		case RefusedSecret, RefusedVersion, RefusedNode, RefusedCert, RefusedOther, RefusedNoReason:
		default:
			t.Fatalf("code %q decoded to %q", s, c)
		}
		if c == RefusedSecret && s != string(RefusedSecret) {
			t.Fatalf("%q read as bad_secret", s)
		}
		if c == RefusedCert && s != string(RefusedCert) {
			t.Fatalf("%q read as bad_cert", s)
		}
		var sr StartRefusal
		if err := json.Unmarshal(b, &sr); err != nil || (sr != StartMayRetry && sr != StartRefusedPath) {
			t.Fatalf("start refusal %q decoded to %q (%v)", s, sr, err)
		}
		if sr == StartRefusedPath && s != string(StartRefusedPath) {
			t.Fatalf("%q read as a path refusal", s)
		}
		// A known value goes back out as the same bytes.
		roundTrip := func(v any) {
			if out, _ := json.Marshal(v); string(out) != string(b) {
				t.Fatalf("%q: %T %q encodes as %s", s, v, v, out)
			}
		}
		if json.Unmarshal(b, new(RunState)) == nil {
			roundTrip(st)
		}
		if json.Unmarshal(b, new(StopReason)) == nil {
			roundTrip(r)
		}
		if c != RefusedOther || s == string(RefusedOther) {
			roundTrip(c)
		}
	})
}
