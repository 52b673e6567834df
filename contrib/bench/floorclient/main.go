// Command floorclient is the least a Go submission client can do: it sends
// one prepared request line (submitload -request-out writes one) to the
// controller's socket ($SHARQ_SOCKET), reads the one-line answer and
// prints the job id. No flags, no configuration, no JSON package: its only
// imports are os, net and bytes, so a process costs the Go runtime's start
// and the exchange. contrib/bench/vs-slurm.sh runs it in the parallel
// shape beside qsub, to show what rate any Go qsub could reach on the
// machine at most.
//
//	floorclient REQUEST-FILE
package main

import (
	"bytes"
	"net"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fail("usage: floorclient REQUEST-FILE")
	}
	req, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err.Error())
	}
	c, err := net.Dial("unix", os.Getenv("SHARQ_SOCKET"))
	if err != nil {
		fail(err.Error())
	}
	if _, err := c.Write(req); err != nil {
		fail(err.Error())
	}
	// An answer to a submission is one short line.
	buf := make([]byte, 0, 512)
	for !bytes.Contains(buf, []byte{'\n'}) && len(buf) < cap(buf) {
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
	}
	const key = `"job_id":"`
	i := bytes.Index(buf, []byte(key))
	if i < 0 {
		fail("no job id in the answer: " + string(bytes.TrimSpace(buf)))
	}
	id := buf[i+len(key):]
	if e := bytes.IndexByte(id, '"'); e >= 0 {
		id = id[:e]
	}
	os.Stdout.Write(append(id, '\n'))
}

func fail(msg string) {
	os.Stderr.WriteString("floorclient: " + msg + "\n")
	os.Exit(1)
}
