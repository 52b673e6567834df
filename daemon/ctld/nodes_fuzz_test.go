package ctld

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// panicLog is a log handler that remembers whether the controller logged
// a recovered panic (it survives them; a fuzzer must still see them).
type panicLog struct {
	mu    sync.Mutex
	first string
}

func (p *panicLog) Enabled(context.Context, slog.Level) bool { return true }
func (p *panicLog) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *panicLog) WithGroup(string) slog.Handler            { return p }
func (p *panicLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
		p.mu.Lock()
		if p.first == "" {
			p.first = b.String()
		}
		p.mu.Unlock()
	}
	return nil
}

func (p *panicLog) panicked() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// FuzzNodeMessages is a hostile node: it holds the cluster's secret and
// says hello as n1 with a fuzzed hello (running jobs, inventory, health,
// errors, session address), then sends fuzzed lines. The controller must
// not panic (it would survive one, by a rebuild; the fuzzer counts it as a
// failure), must keep answering clients, and n1 must not touch the job
// another node runs: it stays running on n2.
func FuzzNodeMessages(f *testing.F) {
	line := func(m api.NodeMsg) []byte {
		m.V = api.NodeVersion
		b, err := json.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		return append(b, '\n')
	}
	plog := &panicLog{}
	tc := prepareTestCluster(f, []string{"n1:8", "n2:8"}, twoShares, "", Limits{})
	tc.log = slog.New(plog)
	tc.start()
	f.Cleanup(tc.stop)
	honest := tc.attachNode("n2")
	victim := tc.submit("a", 4, nil)
	st := honest.expect(api.MsgStart).Start
	if st.Job.ID != victim {
		f.Fatalf("n2 got %+v, want %s", st, victim)
	}
	honest.report(victim, 0, api.RunRunning, 0)

	inv := &api.Inventory{Source: "nvml", CPUs: 8, MemBytes: 1 << 30, GPUs: []api.GPU{{Index: 0, Device: "/dev/nvidia0", UUID: "GPU-1"}}}
	f.Add(line(api.NodeMsg{Running: []api.RunningJob{{JobID: victim, Run: 0}}, Inventory: inv}),
		line(api.NodeMsg{Type: api.MsgJobState, JobState: &api.JobStateMsg{JobID: victim, Run: 0, State: api.RunExited, ExitStatus: 1}}))
	f.Add(line(api.NodeMsg{Running: []api.RunningJob{{JobID: victim, Run: 0, Exited: true, ExitStatus: 9}}, Health: "containerd down", Error: "a; b; a"}),
		append(line(api.NodeMsg{Type: api.MsgHeartbeat, Health: ""}), line(api.NodeMsg{Type: api.MsgJobState, JobState: &api.JobStateMsg{JobID: "1[].x", Run: -1, State: api.RunFailed, NodeFault: true}})...))
	f.Add(line(api.NodeMsg{Inventory: &api.Inventory{Source: "nvml", CPUs: -5, MemBytes: -1, Missing: []string{"/home"}}, SessionAddr: "[::]:0"}), []byte("{\n"))
	f.Add(line(api.NodeMsg{Inventory: &api.Inventory{CPUs: 1 << 62, MemBytes: 1 << 62}, Unlisted: true, SessionAddr: "::::"}), line(api.NodeMsg{Type: api.MsgHello, Node: "n2"}))
	f.Add([]byte(`{"v":1,"type":"hello","inventory":{"source":"nvml","gpus":[{"index":-1},{"index":1e9}]}}`+"\n"), []byte(`{"v":1,"type":"job_state","job_state":{"job_id":"`+victim+`","state":"running"}}`+"\n"))
	f.Add(line(api.NodeMsg{Inventory: inv, GPUFaults: []api.GPUFault{{Index: 0, Kind: api.GPUFaultXid, Xid: 79, Fatal: true, Reason: "Xid 79"}, {Index: 300, Kind: "new"}}}),
		line(api.NodeMsg{Type: api.MsgHeartbeat, GPUFaults: []api.GPUFault{{Index: 0, Kind: api.GPUFaultLost, Fatal: true, Reason: strings.Repeat("\x00é", 300)}, {Index: -7}}}))
	f.Add(line(api.NodeMsg{Running: []api.RunningJob{{JobID: victim, Run: 0}}, Inventory: inv}),
		line(api.NodeMsg{Type: api.MsgHeartbeat, GPUUse: []api.JobGPUUse{{JobID: victim, GPUUse: api.GPUUse{Samples: -1, MeanUtil: -5, RecentUtil: 1e300, PowerWatts: -1}}, {JobID: victim, Run: 0}}}))
	alice := Identity{UID: 1000, GID: 1000, User: "alice"}
	f.Fuzz(func(t *testing.T, hello, msgs []byte) {
		var h api.NodeMsg
		if json.Unmarshal(hello, &h) != nil {
			return
		}
		h.V, h.Type, h.Node, h.Secret = api.Version, api.MsgHello, "n1", testSecret
		conn, err := net.Dial("tcp", tc.listen)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(testWait))
		if err := api.Encode(conn, h); err != nil {
			t.Fatal(err)
		}
		dec := api.NewDecoder(conn)
		var w api.NodeMsg
		if err := dec.Decode(&w); err != nil || w.Type != api.MsgWelcome {
			t.Fatalf("no welcome: %v %+v", err, w)
		}
		drained := make(chan struct{})
		go func() { // what the controller sends n1 (stops, removes)
			defer close(drained)
			io.Copy(io.Discard, conn)
		}()
		if w.Error == "" {
			conn.Write(msgs)
		}
		conn.(*net.TCPConn).CloseWrite()
		// serveNode posts every message, then nodeGone, in order: once n1
		// has no connection the controller has handled them all.
		for deadline := time.Now().Add(testWait); ; {
			var open bool
			if err := tc.ctl.do(context.Background(), func() { n := tc.ctl.nodes["n1"]; open = n != nil && n.conn != nil }); err != nil {
				t.Fatal(err)
			}
			if !open {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("n1's connection is still open after its messages (hello %s)", hello)
			}
			time.Sleep(time.Millisecond)
		}
		conn.Close()
		<-drained
		if p := plog.panicked(); p != "" {
			t.Fatalf("hello %q, messages %q: %s", hello, msgs, p)
		}
		resp := callAs(tc.ctl, alice, api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{victim}}})
		if resp.Error != nil || len(resp.Jobs) != 1 || resp.Jobs[0].State != api.StateRunning ||
			len(resp.Jobs[0].Allocs) != 1 || resp.Jobs[0].Allocs[0].Node != "n2" {
			t.Fatalf("hello %q, messages %q: the job on n2 is now %+v (%v)", hello, msgs, resp.Jobs, resp.Error)
		}
	})
}
