package noded

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime"
)

// Where a job finds what it needs to submit jobs (fixed paths, the same in
// every image). All below /run, the container's own tmpfs: a mount point
// there needs no directory in the image, nor on the read-only root of a
// host-rootfs job (runtime.HostImage).
const (
	jobBinDir   = "/run/sharq/bin"
	jobMungeDir = "/run/sharq/munge"
	jobTLSCA    = "/run/sharq/client-ca.pem"
)

// clientCommands are the commands a job gets, when the node has them.
var clientCommands = []string{"qsub", "qstat", "qdel", "qhold", "qrls", "qalter", "qexec", "qselect", "pbsnodes", "qsig", "qrerun", "qmove", "qorder", "tracejob", "sharqctl"}

// jobClients is what sharqd gives every job so that the client commands
// work inside it, as the job's user, with nothing in the image: the
// commands (read-only), the directory of munged's socket (read-only: a
// job can connect to the socket, not replace it) and the controller's
// TCP client address. The commands then reach the controller with a
// credential of the job's uid, like from a login node.
type jobClients struct {
	Binaries    []string // host paths of the client commands found
	MungeDir    string   // host directory of munged's socket; "" = none
	MungeSocket string   // the socket's name in it
	Servers     []string // the controller's client addresses
	TLSCA       string   // the CA clients check the controller with; "" = no TLS
}

// newJobClients finds, on this node, what cfg says jobs get. What the node
// lacks is left out (and listed in missing for the log): a node without
// munged still runs jobs, whose qsub then says it cannot get a credential.
func newJobClients(cfg *conf.Config) (c jobClients, missing []string) {
	for _, name := range clientCommands {
		p := filepath.Join(cfg.Runtime.ClientBinDir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			c.Binaries = append(c.Binaries, p)
		} else {
			missing = append(missing, p)
		}
	}
	sock := cfg.Cluster.MungeSocket
	if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
		c.MungeDir, c.MungeSocket = filepath.Dir(sock), filepath.Base(sock)
	} else {
		missing = append(missing, sock)
	}
	c.Servers = cfg.Cluster.Servers
	if cfg.Cluster.ClientTLS {
		c.TLSCA = cfg.Cluster.TLSCA
	}
	return c, missing
}

// mounts are the bind mounts of a job's container.
func (c jobClients) mounts() []runtime.Mount {
	var m []runtime.Mount
	for _, b := range c.Binaries {
		m = append(m, runtime.Mount{Source: b, Dest: filepath.Join(jobBinDir, filepath.Base(b)), ReadOnly: true})
	}
	if c.MungeDir != "" {
		m = append(m, runtime.Mount{Source: c.MungeDir, Dest: jobMungeDir, ReadOnly: true})
	}
	if c.TLSCA != "" {
		m = append(m, runtime.Mount{Source: c.TLSCA, Dest: jobTLSCA, ReadOnly: true})
	}
	return m
}

// setEnv adds the variables the commands read to env (sharq's win over
// the job's own) and appends jobBinDir to PATH.
func (c jobClients) setEnv(env map[string]string) {
	if len(c.Binaries) > 0 {
		env["PATH"] = strings.TrimSuffix(env["PATH"], ":") + ":" + jobBinDir
	}
	delete(env, "SHARQ_SOCKET")
	delete(env, "SHARQ_CONF")
	if len(c.Servers) > 0 {
		env["SHARQ_SERVER"] = strings.Join(c.Servers, ",")
	} else {
		delete(env, "SHARQ_SERVER")
	}
	if c.MungeDir != "" {
		env["SHARQ_MUNGE_SOCKET"] = filepath.Join(jobMungeDir, c.MungeSocket)
	}
	if c.TLSCA != "" {
		env["SHARQ_TLS_CA"] = jobTLSCA
	} else {
		delete(env, "SHARQ_TLS_CA")
	}
}
