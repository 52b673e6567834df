package conf

import (
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// namespaceRE is containerd's namespace rule (identifiers.Validate),
// compiled on first use: the client commands link conf for [cluster] and
// should not compile it at every start.
var namespaceRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*$`)
})

// maxSocketPath is the longest path a Unix socket can bind (sun_path
// holds 108 bytes with the terminating NUL).
const maxSocketPath = 107

// cluster reads the [cluster] table; present is false when the file has
// none (which the caller reports), so that only defaults are filled in.
func (l *loader) cluster(t *table, present bool) Cluster {
	c := Cluster{
		SpoolDir:           DefaultSpoolDir,
		Socket:             DefaultSocket,
		Listen:             DefaultListen,
		Admins:             DefaultAdmins(),
		SecretFile:         DefaultSecretFile,
		HeartbeatInterval:  DefaultHeartbeatInterval,
		NodeTimeout:        DefaultNodeTimeout,
		History:            DefaultHistory,
		CheckpointRoot:     DefaultCheckpointRoot,
		MungeSocket:        DefaultMungeSocket,
		SessionListen:      DefaultSessionListen,
		MaxJobBytesPerUser: DefaultMaxJobBytesPerUser,
	}
	if name, ok := t.str("name"); ok {
		c.Name = name
		if !validClusterName(name) {
			t.errf("name", "%q is not a valid cluster name (want 1 to 63 of [a-z0-9-], not starting with '-')", name)
		}
	}
	if present && !t.has("name") {
		t.errAt("", "name is required (it appears in job ids: 123.NAME)")
	}

	c.SpoolDir = t.absPath("spool_dir", c.SpoolDir)
	c.Socket = t.socketPath("socket", c.Socket)
	c.SecretFile = t.absPath("secret_file", c.SecretFile)
	c.CheckpointRoot = t.absPath("checkpoint_root", c.CheckpointRoot)
	c.Mounts = t.mounts("mounts", nil)

	c.Listen = t.address("listen", c.Listen, false)
	if t.has("controller") {
		c.Controller = t.address("controller", "", true)
	} else {
		c.Controller = controllerFor(c.Listen)
	}
	c.Spool = t.strDefault("spool", SpoolBolt)
	if c.Spool != SpoolBolt && c.Spool != SpoolEtcd {
		t.errf("spool", "%q is not a spool backend (%q or %q)", c.Spool, SpoolBolt, SpoolEtcd)
	}
	if ctls, ok := t.strings("controllers"); ok {
		for _, a := range ctls {
			c.Controllers = append(c.Controllers, t.dialAddress("controllers", a))
		}
		if len(ctls) == 0 {
			t.errf("controllers", "is empty")
		}
	} else {
		c.Controllers = []string{c.Controller}
	}
	if m, ok := t.str("metrics"); ok && m != "" {
		c.Metrics = t.address("metrics", "", false)
	}

	c.MungeSocket = t.socketPath("munge_socket", c.MungeSocket)
	if a, ok := t.str("client_listen"); ok && a != "" {
		c.ClientListen = t.address("client_listen", "", false)
	}
	if servers, ok := t.strings("servers"); ok {
		for _, s := range servers {
			c.Servers = append(c.Servers, t.dialAddress("servers", s))
		}
	} else if c.ClientListen != "" {
		for _, ctl := range c.Controllers {
			c.Servers = append(c.Servers, serverFor(ctl, c.ClientListen))
		}
	}
	if b, ok := t.boolean("client_tls"); ok {
		c.ClientTLS = b
	}
	if a, ok := t.str("session_listen"); ok {
		c.SessionListen = a
		if a != "" {
			c.SessionListen = t.listenAny("session_listen", a)
		}
	}

	if admins, ok := t.strings("admins"); ok {
		c.Admins = admins
		for _, a := range admins {
			if why := checkPrincipal(a, false); why != "" {
				t.errf("admins", "%s", why)
			}
		}
	}

	var set, missing []string
	for _, k := range []struct {
		key string
		dst *string
	}{{"tls_cert", &c.TLSCert}, {"tls_key", &c.TLSKey}, {"tls_ca", &c.TLSCA}} {
		*k.dst = t.strDefault(k.key, "")
		if *k.dst == "" {
			missing = append(missing, k.key)
			continue
		}
		set = append(set, k.key)
		if !filepath.IsAbs(*k.dst) {
			t.errf(k.key, "%q is not an absolute path", *k.dst)
		}
	}
	if len(set) > 0 && len(missing) > 0 {
		t.errAt(set[0], "tls_cert, tls_key and tls_ca must be set together (%s missing)", joinAnd(missing))
	}
	if c.ClientTLS && len(set) == 0 {
		t.errf("client_tls", "needs tls_cert, tls_key and tls_ca")
	}

	hbOK, ntOK := !t.has("heartbeat_interval"), !t.has("node_timeout")
	if d, ok := t.duration("heartbeat_interval", c.HeartbeatInterval); ok {
		c.HeartbeatInterval, hbOK = d, d > 0
		if d <= 0 {
			t.errf("heartbeat_interval", "must be positive")
		}
	}
	if d, ok := t.duration("node_timeout", c.NodeTimeout); ok {
		c.NodeTimeout, ntOK = d, true
	}
	if hbOK && ntOK && c.NodeTimeout <= c.HeartbeatInterval {
		key := "node_timeout"
		if !t.has(key) {
			key = "heartbeat_interval"
		}
		t.errAt(key, "node_timeout (%v) must be longer than heartbeat_interval (%v)", c.NodeTimeout, c.HeartbeatInterval)
	}
	c.JobLease = t.jobLease(c.NodeTimeout, ntOK)
	if d, ok := t.duration("history", c.History); ok {
		c.History = d
	}
	c.DefaultShare = t.strDefault("default_share", "") // checked against the shares by config
	if n, ok := t.integer("max_queued_jobs_per_user"); ok {
		c.MaxQueuedJobsPerUser = n
		if n < 0 || n > MaxPerUserLimit {
			t.errf("max_queued_jobs_per_user", "%d is out of range 0..%d (0 means no limit)", n, MaxPerUserLimit)
			c.MaxQueuedJobsPerUser = 0
		}
	}
	if n, ok := t.size("max_job_bytes_per_user"); ok {
		c.MaxJobBytesPerUser = n
		if n < MinMaxJobBytesPerUser {
			t.errf("max_job_bytes_per_user", "%d bytes is below the least, %d (8MiB)", n, MinMaxJobBytesPerUser)
			c.MaxJobBytesPerUser = DefaultMaxJobBytesPerUser
		}
	}
	t.unknown(keys["cluster"]...)
	return c
}

// jobLease reads job_lease: how long a node keeps its jobs running without
// hearing from the controller. It must be longer than node_timeout (when
// that is valid, ntOK), since the controller marks a silent node down at
// node_timeout and requeues its jobs only once their lease has run out.
// Unset, it is DefaultJobLease, or twice node_timeout when that is longer.
func (t *table) jobLease(nodeTimeout time.Duration, ntOK bool) time.Duration {
	def := max(DefaultJobLease, 2*nodeTimeout)
	d, ok := t.duration("job_lease", def)
	if !ok {
		return def
	}
	switch {
	case d <= 0:
		t.errf("job_lease", "must be positive")
	case d > MaxJobLease:
		t.errf("job_lease", "%v is longer than %v", d, MaxJobLease)
	case ntOK && d <= nodeTimeout:
		t.errf("job_lease", "job_lease (%v) must be longer than node_timeout (%v)", d, nodeTimeout)
	}
	return d
}

func (l *loader) runtime(t *table) Runtime {
	r := Runtime{ContainerdSocket: DefaultContainerdSocket, Namespace: DefaultNamespace, ClientBinDir: DefaultClientBinDir}
	r.ContainerdSocket = t.socketPath("containerd_socket", r.ContainerdSocket)
	r.ClientBinDir = t.absPath("client_bin_dir", r.ClientBinDir)
	r.HealthCheck = t.absPath("health_check", "")
	if r.HealthCheck != "" && filepath.Clean(r.HealthCheck) != r.HealthCheck {
		t.errf("health_check", "%q is not a clean path", r.HealthCheck)
	}
	r.GPUSampleInterval = DefaultGPUSampleInterval
	if d, ok := t.duration("gpu_sample_interval", DefaultGPUSampleInterval); ok {
		if d < time.Second || d > time.Hour {
			t.errf("gpu_sample_interval", "%v is out of range (1s to 1h)", d)
		}
		r.GPUSampleInterval = d
	}
	r.HealthCheckInterval = DefaultHealthCheckInterval
	if d, ok := t.duration("health_check_interval", DefaultHealthCheckInterval); ok {
		switch {
		case d < MinHealthCheckInterval || d > 24*time.Hour:
			t.errf("health_check_interval", "%v is out of range (%v to 24h)", d, MinHealthCheckInterval)
		case r.HealthCheck == "":
			t.warnf("health_check_interval", "has no effect without health_check")
		}
		r.HealthCheckInterval = d
	}
	if ns, ok := t.str("namespace"); ok {
		r.Namespace = ns
		if len(ns) > 76 || !namespaceRE().MatchString(ns) {
			t.errf("namespace", "%q is not a valid containerd namespace (letters and digits, with single '.', '_' or '-' between them; at most 76)", ns)
		}
	}
	t.unknown(keys["runtime"]...)
	return r
}

// absPath reads an absolute path.
func (t *table) absPath(key, def string) string {
	p, ok := t.str(key)
	if !ok {
		return def
	}
	if !filepath.IsAbs(p) {
		t.errf(key, "%q is not an absolute path", p)
	}
	return p
}

// socketPath reads an absolute path short enough for a Unix socket.
func (t *table) socketPath(key, def string) string {
	p := t.absPath(key, def)
	if len(p) > maxSocketPath {
		t.errf(key, "%d bytes is too long for a Unix socket path (at most %d)", len(p), maxSocketPath)
	}
	return p
}

// address reads host:port. A dial address must name a host.
func (t *table) address(key, def string, dial bool) string {
	a, ok := t.str(key)
	if !ok {
		return def
	}
	return t.addressValue(key, a, dial)
}

// addressValue checks a, the value (or one element) of key.
func (t *table) addressValue(key, a string, dial bool) string {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		t.errf(key, "%q is not a host:port address", a)
		return a
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		t.errf(key, "%q: port must be a number from 1 to 65535", a)
	}
	if dial {
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			t.errf(key, "%q does not name a host to connect to", a)
		}
	}
	return a
}

// listenAny checks a, key's value, as a host:port to listen on where port
// 0 means any free port.
func (t *table) listenAny(key, a string) string {
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		t.errf(key, "%q is not a host:port address", a)
		return a
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		t.errf(key, "%q: port must be a number from 0 (any) to 65535", a)
	}
	return a
}

// dialAddress checks a, one element of key, as a host:port to dial.
func (t *table) dialAddress(key, a string) string { return t.addressValue(key, a, true) }

// controllerFor is the address node daemons dial when controller is not
// set: listen, with an unspecified host replaced by loopback.
func controllerFor(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	switch ip := net.ParseIP(host); {
	case host == "", ip != nil && ip.IsUnspecified() && ip.To4() != nil:
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

// ClientAddress is the address client commands on other hosts dial to
// reach this controller: controller's host at client_listen's port; ""
// without a client port.
func (c *Cluster) ClientAddress() string {
	if c.ClientListen == "" {
		return ""
	}
	return serverFor(c.Controller, c.ClientListen)
}

// serverFor is an address client commands dial when servers is not set:
// the host node daemons dial (each of controllers) at client_listen's port.
func serverFor(controller, clientListen string) string {
	host, _, err := net.SplitHostPort(controller)
	_, port, err2 := net.SplitHostPort(clientListen)
	if err != nil || err2 != nil {
		return clientListen
	}
	return net.JoinHostPort(host, port)
}

// joinAnd writes "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	s := words[0]
	for _, w := range words[1 : len(words)-1] {
		s += ", " + w
	}
	return s + " and " + words[len(words)-1]
}
