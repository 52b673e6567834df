// Command submitload measures how many submissions per second sharqctld
// acknowledges (each one synced to its spool before the answer). It runs C
// concurrent clients that each submit N/C jobs, one request at a time, on
// one connection each (or a new connection per job with -reconnect, as
// separate qsub processes do). With -server it submits over the TCP
// client port as a remote host does: a fresh MUNGE credential from the
// munged at -munge for every request. Run it as an unprivileged user: the
// controller refuses jobs from root.
//
//	setpriv --reuid=1000 --regid=1000 --clear-groups submitload -socket S -share a -n 20000 -c 32
//	setpriv ... submitload -server ctl:6822 -munge /run/munge/munge.socket.2 -share a -n 20000 -c 16
//
// With -request-out FILE it only writes one request line to FILE, a held
// submission of the script -script (as qsub -h SCRIPT sends it), for
// floorclient, and exits.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/munge"
)

func main() {
	socket := flag.String("socket", os.Getenv("SHARQ_SOCKET"), "controller socket")
	share := flag.String("share", "", "share (queue) to submit to")
	n := flag.Int("n", 10000, "jobs in all")
	c := flag.Int("c", 16, "concurrent clients")
	reconnect := flag.Bool("reconnect", false, "a new connection for every job")
	server := flag.String("server", "", "submit over TCP to this host:port (MUNGE) instead of the socket")
	mungeSock := flag.String("munge", "", "munged socket for -server (default "+munge.DefaultSocket+")")
	pre := flag.Bool("precred", false, "with -server: make every credential before the clock starts, as when the "+
		"clients' munged run on their own hosts (only the controller's decode is timed)")
	requestOut := flag.String("request-out", "", "only write one held submission of -script to this file, for floorclient")
	script := flag.String("script", "", "with -request-out: the job script")
	flag.Parse()
	if *requestOut != "" {
		if err := writeRequest(*requestOut, *share, *script); err != nil {
			fmt.Fprintln(os.Stderr, "submitload:", err)
			os.Exit(1)
		}
		return
	}
	dial := func() (net.Conn, error) { return net.Dial("unix", *socket) }
	var cred func([]byte) ([]byte, error)
	if *server != "" {
		dial = func() (net.Conn, error) { return net.Dial("tcp", *server) }
		cred = func(line []byte) ([]byte, error) {
			c, err := munge.Encode(context.Background(), *mungeSock, api.RequestPayload(line), 0)
			if err != nil {
				return nil, err
			}
			var b bytes.Buffer
			err = api.Encode(&b, api.Credential{V: api.Version, Munge: c})
			return b.Bytes(), err
		}
	}
	if err := run(dial, cred, *pre, *share, *n, *c, *reconnect); err != nil {
		fmt.Fprintln(os.Stderr, "submitload:", err)
		os.Exit(1)
	}
}

// writeRequest writes to path the request line of a held submission of
// script to share, run in the current directory.
func writeRequest(path, share, script string) error {
	body, err := os.ReadFile(script)
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	line, err := submitLine(api.JobSpec{Name: filepath.Base(script), Share: share, Script: string(body), WorkDir: wd, Hold: "u",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}})
	if err != nil {
		return err
	}
	return os.WriteFile(path, line, 0o644)
}

// submitLine is the request line that submits job.
func submitLine(job api.JobSpec) ([]byte, error) {
	var b bytes.Buffer
	err := api.Encode(&b, api.Request{V: api.Version, Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: job}})
	return b.Bytes(), err
}

// run submits n jobs from c clients; cred, when set, makes the credential
// line that precedes each request line (the TCP client port).
// With pre, the n credential lines are made first, untimed.
func run(dial func() (net.Conn, error), cred func([]byte) ([]byte, error), pre bool, share string, n, c int, reconnect bool) error {
	wd, _ := os.Getwd()
	job := api.JobSpec{Name: "load", Share: share, Command: []string{"true"}, WorkDir: wd,
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}
	var creds [][]byte
	if pre && cred != nil {
		msg, err := submitLine(job)
		if err != nil {
			return err
		}
		creds = make([][]byte, n)
		var wg sync.WaitGroup
		errc := make(chan error, c)
		for w := 0; w < c; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < n; i += c {
					l, err := cred(msg)
					if err != nil {
						errc <- err
						return
					}
					creds[i] = l
				}
			}(w)
		}
		wg.Wait()
		close(errc)
		if err := <-errc; err != nil {
			return err
		}
	}
	lat := make([][]time.Duration, c)
	errc := make(chan error, c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var conn net.Conn
			var dec *api.Decoder
			for i := w; i < n; i += c {
				t0 := time.Now()
				if conn == nil || reconnect {
					if conn != nil {
						conn.Close()
					}
					var err error
					if conn, err = dial(); err != nil {
						errc <- err
						return
					}
					dec = api.NewDecoder(conn)
				}
				out, err := submitLine(job)
				if err != nil {
					errc <- err
					return
				}
				switch {
				case creds != nil:
					out = append(creds[i], out...)
				case cred != nil:
					cl, err := cred(out)
					if err != nil {
						errc <- err
						return
					}
					out = append(cl, out...)
				}
				if _, err := conn.Write(out); err != nil {
					errc <- err
					return
				}
				var resp api.Response
				if err := dec.Decode(&resp); err != nil {
					errc <- err
					return
				}
				if resp.Error != nil {
					errc <- resp.Error
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
			if conn != nil {
				conn.Close()
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration { return all[int(p*float64(len(all)-1))] }
	fmt.Printf("submitted %d jobs with %d clients (tcp+munge=%v precred=%v reconnect=%v) in %v: %.0f jobs/s; latency p50 %v p99 %v\n",
		len(all), c, cred != nil, creds != nil, reconnect, elapsed.Round(time.Millisecond), float64(len(all))/elapsed.Seconds(),
		pct(0.5).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond))
	return nil
}
