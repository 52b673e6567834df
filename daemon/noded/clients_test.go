package noded

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime"
)

func TestJobClients(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	for _, c := range []string{"qsub", "qstat", "qdel"} {
		os.WriteFile(filepath.Join(bin, c), []byte("x"), 0o755)
	}
	sock := filepath.Join(dir, "munge", "munge.socket.2")
	os.MkdirAll(filepath.Dir(sock), 0o755)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	plain := filepath.Join(dir, "munge", "not-a-socket")
	os.WriteFile(plain, nil, 0o644)

	tests := []struct {
		name       string
		cluster    conf.Cluster
		wantMounts []runtime.Mount
		wantEnv    map[string]string // "" = absent
		missing    int
	}{
		{
			name:    "everything",
			cluster: conf.Cluster{MungeSocket: sock, Servers: []string{"ctl:6818", "ctl2:6818"}, ClientTLS: true, TLSCA: "/etc/ca.pem"},
			wantMounts: []runtime.Mount{
				{Source: filepath.Join(bin, "qsub"), Dest: "/run/sharq/bin/qsub", ReadOnly: true},
				{Source: filepath.Join(bin, "qstat"), Dest: "/run/sharq/bin/qstat", ReadOnly: true},
				{Source: filepath.Join(bin, "qdel"), Dest: "/run/sharq/bin/qdel", ReadOnly: true},
				{Source: filepath.Dir(sock), Dest: "/run/sharq/munge", ReadOnly: true},
				{Source: "/etc/ca.pem", Dest: "/run/sharq/client-ca.pem", ReadOnly: true},
			},
			wantEnv: map[string]string{"SHARQ_SERVER": "ctl:6818,ctl2:6818", "SHARQ_MUNGE_SOCKET": "/run/sharq/munge/munge.socket.2",
				"SHARQ_TLS_CA": "/run/sharq/client-ca.pem", "PATH": "/usr/bin:/bin:/run/sharq/bin", "SHARQ_SOCKET": ""},
			missing: 12, // qhold qrls qalter qexec qselect pbsnodes qsig qrerun qmove qorder tracejob sharqctl
		},
		{
			name:    "no munged, no client port",
			cluster: conf.Cluster{MungeSocket: plain},
			wantMounts: []runtime.Mount{
				{Source: filepath.Join(bin, "qsub"), Dest: "/run/sharq/bin/qsub", ReadOnly: true},
				{Source: filepath.Join(bin, "qstat"), Dest: "/run/sharq/bin/qstat", ReadOnly: true},
				{Source: filepath.Join(bin, "qdel"), Dest: "/run/sharq/bin/qdel", ReadOnly: true},
			},
			wantEnv: map[string]string{"SHARQ_SERVER": "", "SHARQ_MUNGE_SOCKET": "", "SHARQ_TLS_CA": "", "PATH": "/usr/bin:/bin:/run/sharq/bin"},
			missing: 13,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &conf.Config{Cluster: tt.cluster, Runtime: conf.Runtime{ClientBinDir: bin}}
			c, missing := newJobClients(cfg)
			if len(missing) != tt.missing {
				t.Errorf("missing %v, want %d", missing, tt.missing)
			}
			if got := c.mounts(); !reflect.DeepEqual(got, tt.wantMounts) {
				t.Errorf("mounts\n got %+v\nwant %+v", got, tt.wantMounts)
			}
			// The job's own values (from qsub -V inside another job, say) lose.
			env := map[string]string{"PATH": "/usr/bin:/bin", "SHARQ_SOCKET": "/x", "SHARQ_SERVER": "evil:1", "SHARQ_TLS_CA": "/y"}
			c.setEnv(env)
			for k, want := range tt.wantEnv {
				if got, ok := env[k]; got != want || (want == "") == ok {
					t.Errorf("%s = %q (set %v), want %q", k, got, ok, want)
				}
			}
		})
	}
}
