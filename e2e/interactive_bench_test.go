//go:build !unit

package e2e

import (
	"bytes"
	"testing"
	"time"
)

// BenchmarkInteractivePrompt: from starting qsub -I on an idle node to the
// shell's first prompt on the terminal (submit, schedule, container start,
// session grant, exec).
func BenchmarkInteractivePrompt(b *testing.B) {
	c := interactiveCluster(b)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		tm := c.onTerm(b, alice, "qsub", "-I")
		tm.expect(`ready\r?\n(.|\n)*\$ `, 30*time.Second)
		total += time.Since(t0)
		tm.send("exit\r")
		tm.exit(15 * time.Second)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-prompt")
}

// BenchmarkKeystrokeEcho: one key typed on qsub -I's terminal to its echo
// back from the job's pseudo-terminal: client, node, containerd's shim and
// back.
func BenchmarkKeystrokeEcho(b *testing.B) {
	c := interactiveCluster(b)
	tm := c.onTerm(b, alice, "qsub", "-I", "--", "/bin/cat")
	tm.expect(`ready`, 30*time.Second)
	time.Sleep(500 * time.Millisecond)
	// Echo of a typed key, as the terminal shows it: read the master
	// directly (the helper's reader would poll).
	tm.mu.Lock()
	tm.out.Reset()
	tm.seen = 0
	tm.mu.Unlock()
	key := []byte("k")
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		n0 := tm.count(key)
		if _, err := tm.f.Write(key); err != nil {
			b.Fatal(err)
		}
		for tm.count(key) == n0 {
			tm.wait()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/1000, "ms-echo")
	tm.send("\r\x04") // end the line, then end of file
	tm.exit(15 * time.Second)
}

// count is how many times k appears in what the terminal showed.
func (tm *term) count(k []byte) int {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return bytes.Count(tm.out.Bytes(), k)
}

// wait gives the reader a moment without sleeping a whole tick.
func (tm *term) wait() { time.Sleep(20 * time.Microsecond) }
