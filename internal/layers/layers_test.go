package layers

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/cli"
)

const mod = "github.com/sharq-hpc/sharq/"

// rule: the packages matching a pattern link none of the forbidden
// import-path prefixes.
type rule struct {
	why       string
	pkgs      []string // go list patterns
	forbidden []string // import-path prefixes
}

var (
	core       = mod + "daemon/sched"
	containerd = "github.com/containerd/containerd"
	// rtContainerd is sharq's containerd runtime (the implementation of
	// package runtime's interface): what links it links containerd's client.
	rtContainerd = mod + "runtime/containerd"
	daemons      = []string{mod + "daemon/ctld", mod + "daemon/noded", mod + "spool", "go.etcd.io/"}
)

// userCommands are the client commands (cli.Commands) but the admin's.
func userCommands() []string {
	var out []string
	for _, n := range cli.CommandNames() {
		if n != "sharqctl" {
			out = append(out, n)
		}
	}
	return out
}

func cmds(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, mod+"cmd/"+n)
	}
	return out
}

var rules = []rule{
	{"the user commands start in milliseconds and are mounted into every job: no scheduling core, no container runtime, no daemon, no etcd",
		cmds(userCommands()...), append([]string{core, containerd, rtContainerd}, daemons...)},
	{"sharqctl is the admin's client: no scheduling core or daemon (it links containerd only for sharqctl image import, run on a node host)",
		cmds("sharqctl"), append([]string{core}, daemons...)},
	{"the configuration is read by every command: it does not link the scheduling core (daemon/schedconf converts it)",
		[]string{mod + "conf"}, []string{core, containerd}},
	{"the node daemon executes orders: it never links the scheduling core or the controller",
		[]string{mod + "daemon/noded", mod + "cmd/sharqd"}, []string{core, mod + "daemon/ctld", mod + "spool"}},
	{"the runtime interface, the host-process runtime, the conformance suite and GPU discovery link no containerd (runtime/containerd implements the interface, as containerd's plugins implement its core's)",
		[]string{mod + "runtime", mod + "runtime/hostproc", mod + "runtime/runtimetest", mod + "runtime/gpu"}, []string{containerd, rtContainerd}},
	{"the node daemon's package takes its runtime from its main (cmd/sharqd gives runtime/containerd's): it links no containerd itself",
		[]string{mod + "daemon/noded"}, []string{containerd, rtContainerd}},
	{"the scheduling core is pure: it links neither the configuration nor any I/O edge",
		[]string{core}, []string{mod + "conf", mod + "spool", mod + "runtime", mod + "acct", mod + "client", containerd, "go.etcd.io/"}},
}

// TestLayers checks every rule against go list's dependency graph.
func TestLayers(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed (go list): %v", err)
	}
	for _, r := range rules {
		args := append([]string{"list", "-tags", "urfave_cli_no_docs", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}, r.pkgs...)
		out, err := exec.Command(goBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %v: %v\n%s", r.pkgs, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != len(r.pkgs) {
			t.Fatalf("go list %v: %d packages, want %d:\n%s", r.pkgs, len(lines), len(r.pkgs), out)
		}
		for _, line := range lines {
			f := strings.Fields(line)
			for _, dep := range f[1:] {
				for _, bad := range r.forbidden {
					if dep == bad || strings.HasPrefix(dep, bad+"/") || strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad) {
						t.Errorf("%s links %s: %s", f[0], dep, r.why)
					}
				}
			}
		}
	}
}
