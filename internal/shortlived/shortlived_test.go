package shortlived

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// procsAfterInit is GOMAXPROCS once the package's init has run: this
// file's init runs after shortlived.go's (a package's files are compiled in
// name order), and before go test's -cpu sets its own.
var procsAfterInit int

func init() { procsAfterInit = runtime.GOMAXPROCS(0) }

// TestOneP: a process that imports the package runs on one P.
func TestOneP(t *testing.T) {
	if procsAfterInit != 1 {
		t.Fatalf("GOMAXPROCS = %d after init, want 1", procsAfterInit)
	}
}

// TestInitFirst builds qsub and reads its init trace: the package's init
// must run before every package but the runtime's own dependencies, or the
// stack it sizes has already grown (internal/godebug's init, the time zone
// lookup in BurntSushi/toml's) and the runtime has set up every P.
func TestInitFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds qsub")
	}
	exe := filepath.Join(t.TempDir(), "qsub")
	build := exec.Command("go", "build", "-tags=urfave_cli_no_docs", "-o", exe, "github.com/sharq-hpc/sharq/cmd/qsub")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.Command(exe, "--help")
	run.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, _ := run.CombinedOutput() // the trace is on stderr whatever qsub says
	var inits []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, ok := strings.CutPrefix(line, "init "); ok {
			inits = append(inits, strings.Fields(name)[0])
		}
	}
	const self = "github.com/sharq-hpc/sharq/internal/shortlived"
	at := -1
	for i, p := range inits {
		if p == self {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("qsub's init trace has no %s:\n%s", self, out)
	}
	for _, p := range inits[:at] {
		// Before it: only the runtime's own packages and small
		// dependency-free ones whose paths sort first (crypto/internal/...).
		if p != "runtime" && !strings.HasPrefix(p, "internal/") && !strings.HasPrefix(p, "crypto/internal/") && p != "math" {
			t.Errorf("%s initialised before %s (inits: %v)", p, self, inits[:at+1])
		}
	}
	for _, late := range []string{"internal/godebug", "github.com/BurntSushi/toml/internal"} {
		for _, p := range inits[:at] {
			if p == late {
				t.Errorf("%s initialised before %s: the stack has grown already", late, self)
			}
		}
	}
}
