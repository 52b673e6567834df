package ctld

import (
	"bytes"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/munged"
)

// remoteUID has no passwd entry: its name is the uid, it has no groups.
const remoteUID = 4242

// startMunged runs a munged for t with key ("" = a fresh key).
func startMunged(t testing.TB, key string) *munged.Daemon { return munged.ForTest(t, key) }

// credentialAs asks the munged at socket for a credential with payload,
// from a process running as uid (the munge command: munged takes the uid
// from its socket's peer).
func credentialAs(t testing.TB, socket string, uid uint32, payload []byte, ttl int) string {
	t.Helper()
	cmd := exec.Command("munge", "-S", socket, "-t", strconv.Itoa(ttl), "-s", string(payload))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("munge as %d: %v: %s", uid, err, out)
	}
	return strings.TrimSpace(string(out))
}

// remoteCall sends a credential line and a request line as they are and
// returns the answer.
func remoteCall(t *testing.T, addr string, credLine, reqLine []byte) *api.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(append(append([]byte{}, credLine...), reqLine...)); err != nil {
		t.Fatal(err)
	}
	var resp api.Response
	if err := api.NewDecoderLimit(conn, 1<<30).ReadResponse(&resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

func line(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := api.Encode(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func submitLine(t *testing.T, name string) []byte {
	return line(t, api.Request{V: api.Version, Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{
		Name: name, Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}}})
}

func TestNSSUser(t *testing.T) {
	name, groups := nssUser(0, 0, time.Now())
	if name != "root" {
		t.Errorf("uid 0 is %q", name)
	}
	for _, g := range groups {
		if g == 0 {
			t.Errorf("groups %v repeat the credential's gid", groups)
		}
	}
	if name, groups := nssUser(3999999, 7, time.Now()); name != "3999999" || len(groups) != 0 {
		t.Errorf("unknown uid: %q %v", name, groups)
	}
}
