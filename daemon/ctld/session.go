package ctld

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// sessionTokenTTL is how long a session token is good for: the client
// connects right after the answer.
const sessionTokenTTL = 30 * time.Second

// maxGrantsPerUser bounds the session tokens one user holds on one node
// within their TTL. A node keeps at most 1024 unused tokens (for everyone):
// without this bound one user asking in a loop would fill its table, and
// every other user's sessions there would be refused until the tokens
// expired.
const maxGrantsPerUser = 64

// grantKey is who was granted sessions on which node.
type grantKey struct {
	uid  uint32
	node string
}

// takeGrant counts a grant to uid on node at now, or says how long until
// the user may have another.
func (c *Controller) takeGrant(uid uint32, node string, now time.Time) (wait time.Duration, ok bool) {
	if c.grants == nil {
		c.grants = map[grantKey][]time.Time{}
	}
	if len(c.grants) > 4096 { // users x nodes that asked once: drop the spent
		for k, exps := range c.grants {
			if len(exps) == 0 || !exps[len(exps)-1].After(now) {
				delete(c.grants, k)
			}
		}
	}
	k := grantKey{uid, node}
	live := slices.DeleteFunc(c.grants[k], func(exp time.Time) bool { return !exp.After(now) })
	if len(live) >= maxGrantsPerUser {
		c.grants[k] = live
		return live[0].Sub(now), false
	}
	c.grants[k] = append(live, now.Add(sessionTokenTTL))
	return 0, true
}

// checkInteractive applies a partition's rules to an interactive job (qsub
// -I) at submit: the partition must take them, arrays are refused, and
// max_interactive_walltime caps the walltime and is the default one.
func checkInteractive(p *conf.Partition, j *api.Job) *api.Error {
	if !j.Interactive {
		return nil
	}
	switch {
	case !p.Interactive:
		return &api.Error{Code: api.CodeInvalidState, Message: fmt.Sprintf("partition %s takes no interactive jobs (interactive = false)", p.Name)}
	case !j.ArrayIndices.IsZero():
		return badRequest("an interactive job cannot be an array job")
	case j.Script != "":
		return badRequest("an interactive job runs no script: give its command after --, or none for a shell")
	}
	// The session carries the output; no output files unless asked for.
	for _, o := range []*string{&j.Stdout, &j.Stderr} {
		if *o == "" && j.Join == "" {
			*o = "/dev/null"
		}
	}
	r := &j.Resources
	if max := p.MaxInteractiveWalltime; max > 0 {
		if r.Walltime == 0 {
			r.Walltime = max
		}
		if r.Walltime > max {
			return badRequest(fmt.Sprintf("walltime %v exceeds partition %s's max_interactive_walltime %v", r.Walltime, p.Name, max))
		}
	}
	return nil
}

// session answers OpSession on the loop: the job's owner (or an admin)
// gets a one-time token for a session on one of the job's nodes, and the
// node gets the same token with the job, run and uid it is good for.
func (c *Controller) session(id Identity, s *api.SessionSpec) (*api.SessionGrant, *api.Error) {
	if s == nil {
		return nil, badRequest("session: no job")
	}
	if len(s.Command) > api.MaxSessionArgs {
		return nil, badRequest(fmt.Sprintf("session command has more than %d arguments", api.MaxSessionArgs))
	}
	total := 0
	for _, a := range s.Command {
		total += len(a)
		if strings.IndexByte(a, 0) >= 0 {
			return nil, badRequest("session command argument with a NUL byte")
		}
	}
	if total > api.MaxSessionArgsLen {
		return nil, badRequest(fmt.Sprintf("session command longer than %d bytes", api.MaxSessionArgsLen))
	}
	jobs, e := c.lookup(s.Job)
	if e != nil {
		return nil, e
	}
	if len(jobs) != 1 || !jobs[0].ArrayIndices.IsZero() {
		return nil, badRequest("a session is opened in one job, not an array: name a subjob (" + s.Job + ")")
	}
	j := jobs[0]
	if !c.mayTouch(id, j) {
		return nil, &api.Error{Code: api.CodePermission, Message: "Unauthorized Request " + j.ID + ": a session is for the job's owner", ID: j.ID}
	}
	if id.UID == 0 && j.Owner.UID != 0 {
		// Root (an admin on the controller host) enters as the job's user:
		// the session runs with the job's identity in any case.
		c.log.Info("session by root in a user's job", "job", j.ID, "owner", j.Owner.User)
	}
	if !j.running() || j.Stopping != "" {
		why := "it is not running (state " + string(j.State) + ")"
		if j.Stopping != "" {
			why = "it is stopping (" + j.Stopping + ")"
		}
		return nil, &api.Error{Code: api.CodeInvalidState, Message: fmt.Sprintf("no session in job %s: %s", j.ID, why), ID: j.ID}
	}
	if s.Primary && !j.Interactive {
		return nil, badRequest(fmt.Sprintf("job %s is not interactive (qsub -I)", j.ID))
	}
	node := s.Node
	if node == "" && len(j.Allocs) > 0 {
		node = j.Allocs[0].Node
	}
	if s.Primary && len(j.Allocs) > 0 && node != j.Allocs[0].Node {
		return nil, badRequest("an interactive job's own session is on its first node")
	}
	if !slices.ContainsFunc(j.Allocs, func(a api.Alloc) bool { return a.Node == node }) {
		var names []string
		for _, a := range j.Allocs {
			names = append(names, a.Node)
		}
		return nil, badRequest(fmt.Sprintf("job %s does not run on node %q (its nodes: %s)", j.ID, node, strings.Join(names, ",")))
	}
	n := c.nodes[node]
	switch {
	case n == nil || n.conn == nil:
		return nil, &api.Error{Code: api.CodeInvalidState, Message: fmt.Sprintf("node %s is not connected to the controller", node), ID: j.ID}
	case n.sessionAddr == "":
		return nil, &api.Error{Code: api.CodeInvalidState, Message: fmt.Sprintf("node %s serves no sessions (session_listen is off there, or its port could not be opened: see its log)", node), ID: j.ID}
	}
	if wait, ok := c.takeGrant(id.UID, node, c.now()); !ok {
		return nil, &api.Error{Code: api.CodeInvalidState, Message: fmt.Sprintf("%d sessions granted to you on node %s within %v, the most for one user (used or not): retry in %v",
			maxGrantsPerUser, node, sessionTokenTTL, wait.Round(time.Second)), ID: j.ID}
	}
	cmd := s.Command
	if s.Primary && len(cmd) == 0 {
		cmd = j.Command // qsub -I -- cmd args
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, &api.Error{Code: api.CodeInternal, Message: "session token: " + err.Error()}
	}
	token := hex.EncodeToString(b[:])
	exp := c.now().Add(sessionTokenTTL)
	c.sendNode(node, api.NodeMsg{Type: api.MsgSession, Session: &api.SessionOrder{
		Token: token, JobID: j.ID, Run: j.Runs - 1, UID: j.Owner.UID, Command: slices.Clone(cmd),
		Primary: s.Primary, Munge: id.Munge, Expires: exp,
	}})
	what := "session"
	if s.Primary {
		what = "interactive session"
	}
	c.log.Info(what+" granted", "job", j.ID, "node", node, "user", id.User)
	return &api.SessionGrant{Job: j.ID, Node: node, Addr: n.sessionAddr, Token: token, Munge: id.Munge, Expires: exp,
		TLS: c.cfg.Cluster.ClientTLS}, nil
}

// sessionAddr is the address clients dial for a node's sessions: what the
// node reported, with an unspecified host (it listens on every address)
// replaced by the address its connection to the controller comes from.
func sessionAddr(reported string, from net.IP) string {
	if reported == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(reported)
	if err != nil || port == "0" {
		return ""
	}
	if ip := net.ParseIP(host); (host == "" || ip != nil && ip.IsUnspecified()) && from != nil {
		host = from.String()
	}
	return net.JoinHostPort(host, port)
}
