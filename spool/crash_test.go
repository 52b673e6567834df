package spool

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test runs a child copy of this test binary that writes to a
// spool as fast as it can and reports on stdout, one line each:
//
//	SPOOL ids FIRST N            NextIDs(N) returned FIRST
//	SPOOL begin put ID:VER:FIN…  a Put of these records is about to start
//	SPOOL begin del ID…          a Delete is about to start
//	SPOOL begin purge UNIX       a Purge(time.Unix(UNIX, 0)) is about to start
//	SPOOL begin state KEY VER    a SetState(KEY, crashData) (VER 0: nil) is about to start
//	SPOOL ack                    the operation begun last returned nil
//
// The parent SIGKILLs the child at a seeded moment, reopens the spool and
// checks that it holds exactly the acknowledged state, or that state plus
// the whole of the one operation in flight (never part of it), and that
// NextIDs continues above every number ever handed out. Rounds differ in
// when the child's spool checkpoints its write-ahead log (crashLimits), so
// that kills land in log appends, in checkpoints and in between.
const (
	crashEnvDir    = "SHARQ_SPOOL_CRASH_DIR"
	crashEnvSeed   = "SHARQ_SPOOL_CRASH_SEED"
	crashEnvLimits = "SHARQ_SPOOL_CRASH_LIMITS"
	crashRounds    = 6
)

// crashLimits are the child's checkpoint limits by round: the defaults
// (checkpoints only when the log is large: kills land in appends), a
// checkpoint after every write (kills land mid-checkpoint), and small logs
// that start over often (replays past frames of earlier rounds).
var crashLimits = []walLimits{
	{},
	{entries: 0, bytes: 1 << 30, logSize: 64 << 20},
	{entries: 20, bytes: 1 << 30, logSize: 16 << 10},
	{entries: 3, bytes: 1 << 30, logSize: 64 << 20},
}

// crashStateKeys are the SetState keys the child writes; in a crashModel
// they appear as "state:KEY".
var crashStateKeys = []string{"drained", "usage"}

// crashData is the content of version ver of record id: about 1 KiB,
// derived from both so that a torn or misplaced value is detected.
func crashData(id string, ver int) []byte {
	head := fmt.Sprintf("id=%s ver=%d ", id, ver)
	sum := sha256.Sum256([]byte(head))
	var b strings.Builder
	b.WriteString(head)
	for b.Len() < 1000 {
		fmt.Fprintf(&b, "%x", sum)
	}
	return []byte(b.String())
}

type crashState struct {
	ver int
	fin int64 // Unix seconds; 0 while active
}

type crashModel map[string]crashState

func TestCrashRecovery(t *testing.T) {
	if dir := os.Getenv(crashEnvDir); dir != "" {
		seed, _ := strconv.ParseUint(os.Getenv(crashEnvSeed), 10, 64)
		limits, _ := strconv.Atoi(os.Getenv(crashEnvLimits))
		crashChild(dir, seed, crashLimits[limits])
		return
	}
	dir := t.TempDir()
	model := crashModel{}
	var maxHanded uint64
	for round := range crashRounds {
		seed := uint64(round + 1)
		rng := rand.New(rand.NewPCG(seed, 0x5ba7))
		killAfter := 20 + rng.IntN(300) // acknowledged operations
		jitter := time.Duration(rng.IntN(3000)) * time.Microsecond
		limits := round % len(crashLimits)

		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashRecovery$")
		cmd.Env = append(os.Environ(), crashEnvDir+"="+dir, crashEnvSeed+"="+strconv.FormatUint(seed, 10), crashEnvLimits+"="+strconv.Itoa(limits))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked, pending, handed := readCrashLog(t, out, model, killAfter, jitter, cmd.Process)
		waitErr := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child was not killed by SIGKILL: %v", round, waitErr)
		}
		maxHanded = max(maxHanded, handed)
		var inFlight string
		model, inFlight = checkCrashSpool(t, round, dir, acked, pending, &maxHanded)
		t.Logf("round %d (seed %d, limits %+v): killed after %d acks + %v; operation in flight: %s; %d records and states, ids up to %d", round, seed, crashLimits[limits], killAfter, jitter, inFlight, len(model), maxHanded)
	}
}

// readCrashLog follows the child's log, applies acknowledged operations to
// a copy of model, and kills the child after killAfter acks plus jitter. It
// returns the acknowledged model, the operation in flight (nil if none) and
// the highest job number handed out.
func readCrashLog(t *testing.T, out io.Reader, model crashModel, killAfter int, jitter time.Duration, p *os.Process) (crashModel, func(crashModel) crashModel, uint64) {
	t.Helper()
	acked := maps.Clone(model)
	var (
		pending func(crashModel) crashModel
		handed  uint64
		acks    int
		killed  bool
	)
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			break // EOF after the kill; a torn last line is ignored
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "SPOOL" {
			continue
		}
		switch f[1] {
		case "ids":
			first, _ := strconv.ParseUint(f[2], 10, 64)
			n, _ := strconv.ParseUint(f[3], 10, 64)
			handed = max(handed, first+n-1)
		case "begin":
			pending = crashOp(t, f[2:])
		case "ack":
			acked = pending(acked)
			pending = nil
			acks++
		default:
			t.Fatalf("child: unexpected line %q", line)
		}
		if !killed && acks >= killAfter {
			go func() {
				time.Sleep(jitter)
				p.Signal(syscall.SIGKILL)
			}()
			killed = true
		}
	}
	if !killed {
		t.Fatalf("child stopped after %d acks, before the kill", acks)
	}
	return acked, pending, handed
}

// crashOp parses "put|del|purge ARGS" into a function that applies it.
func crashOp(t *testing.T, f []string) func(crashModel) crashModel {
	t.Helper()
	args := f[1:]
	switch f[0] {
	case "put":
		return func(m crashModel) crashModel {
			m = maps.Clone(m)
			for _, a := range args {
				p := strings.Split(a, ":")
				ver, _ := strconv.Atoi(p[1])
				fin, _ := strconv.ParseInt(p[2], 10, 64)
				m[p[0]] = crashState{ver: ver, fin: fin}
			}
			return m
		}
	case "del":
		return func(m crashModel) crashModel {
			m = maps.Clone(m)
			for _, id := range args {
				delete(m, id)
			}
			return m
		}
	case "state":
		ver, _ := strconv.Atoi(args[1])
		return func(m crashModel) crashModel {
			m = maps.Clone(m)
			if ver == 0 {
				delete(m, "state:"+args[0])
			} else {
				m["state:"+args[0]] = crashState{ver: ver}
			}
			return m
		}
	case "purge":
		before, _ := strconv.ParseInt(args[0], 10, 64)
		return func(m crashModel) crashModel {
			m = maps.Clone(m)
			for id, s := range m {
				if !strings.HasPrefix(id, "state:") && s.fin != 0 && s.fin < before {
					delete(m, id)
				}
			}
			return m
		}
	}
	t.Fatalf("child: unknown operation %q", f)
	return nil
}

// checkCrashSpool reopens the spool after a kill and returns the model it
// matches.
func checkCrashSpool(t *testing.T, round int, dir string, acked crashModel, pending func(crashModel) crashModel, maxHanded *uint64) (crashModel, string) {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("round %d: reopen after kill: %v", round, err)
	}
	defer s.Close()
	ctx := context.Background()
	got := crashModel{}
	err = s.Scan(ctx, func(r Record) error {
		var ver int
		if _, err := fmt.Sscanf(string(r.Data), "id="+r.ID+" ver=%d ", &ver); err != nil {
			return fmt.Errorf("record %s: unreadable data %.40q", r.ID, r.Data)
		}
		if string(r.Data) != string(crashData(r.ID, ver)) {
			return fmt.Errorf("record %s version %d: data damaged", r.ID, ver)
		}
		var fin int64
		if !r.Finished.IsZero() {
			fin = r.Finished.Unix()
		}
		got[r.ID] = crashState{ver: ver, fin: fin}
		return nil
	})
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	for _, key := range crashStateKeys {
		v, err := s.State(ctx, key)
		if err != nil {
			t.Fatalf("round %d: State(%s): %v", round, key, err)
		}
		if v == nil {
			continue
		}
		var ver int
		if _, err := fmt.Sscanf(string(v), "id=state:"+key+" ver=%d ", &ver); err != nil || string(v) != string(crashData("state:"+key, ver)) {
			t.Fatalf("round %d: state %s damaged: %.40q", round, key, v)
		}
		got["state:"+key] = crashState{ver: ver}
	}
	match, inFlight := acked, "none"
	if pending != nil {
		inFlight = "not committed"
	}
	if !maps.Equal(got, acked) {
		if pending == nil || !maps.Equal(got, pending(acked)) {
			t.Fatalf("round %d: spool after kill matches neither the acknowledged state nor it plus the operation in flight\n%s",
				round, diffModels(acked, got))
		}
		match, inFlight = pending(acked), "committed"
	}
	// Every record is also reachable by Get, intact.
	for id, st := range match {
		if strings.HasPrefix(id, "state:") {
			continue
		}
		r, err := s.Get(ctx, id)
		if err != nil {
			t.Fatalf("round %d: Get(%s): %v", round, id, err)
		}
		if string(r.Data) != string(crashData(id, st.ver)) {
			t.Fatalf("round %d: Get(%s): data is not version %d", round, id, st.ver)
		}
	}
	next, err := s.NextIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if next <= *maxHanded {
		t.Fatalf("round %d: NextIDs = %d after kill, but %d was handed out before", round, next, *maxHanded)
	}
	*maxHanded = next
	return match, inFlight
}

func diffModels(want, got crashModel) string {
	var b strings.Builder
	ids := slices.Sorted(maps.Keys(want))
	for _, id := range ids {
		if g, ok := got[id]; !ok {
			fmt.Fprintf(&b, "  missing %s %+v\n", id, want[id])
		} else if g != want[id] {
			fmt.Fprintf(&b, "  %s = %+v, acknowledged %+v\n", id, g, want[id])
		}
		if b.Len() > 2000 {
			return b.String() + "  ...\n"
		}
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[id]; !ok {
			fmt.Fprintf(&b, "  unexpected %s %+v\n", id, got[id])
		}
	}
	return b.String()
}

// crashChild is the killed process: it loops over random operations until
// killed (or a safety deadline passes).
func crashChild(dir string, seed uint64, limits walLimits) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
	s, err := Open(dir, Options{limits: limits})
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 0xc4a5))
	// Live records and their versions, from what survived earlier rounds.
	live := map[string]int{}
	err = s.Scan(ctx, func(r Record) error {
		var ver int
		_, err := fmt.Sscanf(string(r.Data), "id="+r.ID+" ver=%d ", &ver)
		live[r.ID] = ver
		return err
	})
	if err != nil {
		fail(err)
	}
	stateVer := map[string]int{}
	for _, key := range crashStateKeys {
		v, err := s.State(ctx, key)
		if err != nil {
			fail(err)
		}
		if v != nil {
			var ver int
			fmt.Sscanf(string(v), "id=state:"+key+" ver=%d ", &ver)
			stateVer[key] = ver
		}
	}
	emit := func(format string, a ...any) {
		if _, err := fmt.Fprintf(os.Stdout, "SPOOL "+format+"\n", a...); err != nil {
			os.Exit(4)
		}
	}
	clock := time.Now().Unix()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		clock++
		ids := slices.Sorted(maps.Keys(live))
		switch op := rng.IntN(12); {
		case op >= 10: // controller state: set or delete a key; or reserve numbers alone
			if op == 11 {
				n := 1 + rng.IntN(1024)
				first, err := s.NextIDs(ctx, n)
				if err != nil {
					fail(err)
				}
				emit("ids %d %d", first, n)
				continue
			}
			key := crashStateKeys[rng.IntN(len(crashStateKeys))]
			ver := stateVer[key] + 1
			var val []byte
			if rng.IntN(4) == 0 {
				ver = 0
			} else {
				val = crashData("state:"+key, ver)
			}
			emit("begin state %s %d", key, ver)
			if err := s.SetState(ctx, key, val); err != nil {
				fail(err)
			}
			emit("ack")
			if ver == 0 {
				delete(stateVer, key)
			} else {
				stateVer[key] = ver
			}
		case op < 6 || len(ids) < 10: // submit a batch of new jobs
			n := 1 + rng.IntN(8)
			first, err := s.NextIDs(ctx, n)
			if err != nil {
				fail(err)
			}
			emit("ids %d %d", first, n)
			var recs []Record
			for num := first; num < first+uint64(n); num++ {
				if rng.IntN(4) == 0 {
					for _, id := range []string{fmt.Sprintf("%d[].lab", num), fmt.Sprintf("%d[0].lab", num), fmt.Sprintf("%d[1].lab", num)} {
						recs = append(recs, Record{ID: id, Data: crashData(id, 1)})
					}
				} else {
					id := fmt.Sprintf("%d.lab", num)
					recs = append(recs, Record{ID: id, Data: crashData(id, 1)})
				}
			}
			put(s, recs, live, emit, fail)
		case op < 8: // update some jobs, finishing some
			var recs []Record
			for range 1 + rng.IntN(4) {
				id := ids[rng.IntN(len(ids))]
				r := Record{ID: id, Data: crashData(id, live[id]+1)}
				if rng.IntN(2) == 0 {
					r.Finished = time.Unix(clock, 0)
				}
				recs = append(recs, r)
				live[id]++ // so a repeated id in this batch gets the next version
			}
			for _, r := range recs {
				live[r.ID]-- // put sets the final versions
			}
			put(s, recs, live, emit, fail)
		case op < 9: // delete
			del := []string{ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]}
			emit("begin del %s", strings.Join(del, " "))
			if err := s.Delete(ctx, del...); err != nil {
				fail(err)
			}
			emit("ack")
			for _, id := range del {
				delete(live, id)
			}
		default: // purge history older than 20 operations
			before := clock - 20
			emit("begin purge %d", before)
			if _, err := s.Purge(ctx, time.Unix(before, 0)); err != nil {
				fail(err)
			}
			emit("ack")
			live = map[string]int{}
			if err := s.Scan(ctx, func(r Record) error {
				var ver int
				_, err := fmt.Sscanf(string(r.Data), "id="+r.ID+" ver=%d ", &ver)
				live[r.ID] = ver
				return err
			}); err != nil {
				fail(err)
			}
		}
	}
	fail(fmt.Errorf("not killed within the deadline"))
}

func put(s *Bolt, recs []Record, live map[string]int, emit func(string, ...any), fail func(error)) {
	args := make([]string, len(recs))
	for i, r := range recs {
		var fin int64
		if !r.Finished.IsZero() {
			fin = r.Finished.Unix()
		}
		var ver int
		fmt.Sscanf(string(r.Data), "id="+r.ID+" ver=%d ", &ver)
		args[i] = fmt.Sprintf("%s:%d:%d", r.ID, ver, fin)
	}
	emit("begin put %s", strings.Join(args, " "))
	if err := s.Put(context.Background(), recs...); err != nil {
		fail(err)
	}
	emit("ack")
	for _, r := range recs {
		var ver int
		fmt.Sscanf(string(r.Data), "id="+r.ID+" ver=%d ", &ver)
		live[r.ID] = ver
	}
}
