package ctld

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/user"
	"strconv"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/munge"
	"github.com/sharq-hpc/sharq/internal/secret"
)

// listenClientsTCP opens the TCP client port (client_listen), with TLS
// when client_tls is set: the cluster's certificate, no client
// certificates (users have none; MUNGE says who they are).
func (c *Controller) listenClientsTCP() (net.Listener, error) {
	cl := c.cfg.Cluster
	l, err := net.Listen("tcp", cl.ClientListen)
	if err != nil {
		return nil, fmt.Errorf("listen for clients on %s: %w", cl.ClientListen, err)
	}
	if !cl.ClientTLS {
		return l, nil
	}
	cert, err := secret.KeyPair(cl.TLSCert, cl.TLSKey)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("client TLS: %w", err)
	}
	return tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}), nil
}

// serveRemoteClient answers requests on one TCP client connection. Each
// request is preceded by an api.Credential line; the caller is who the
// credential says, once the controller's munged has checked it and its
// payload matches the request line's digest. A refused credential is
// answered with CodeAuth naming the cause, and the connection closed.
func (c *Controller) serveRemoteClient(ctx context.Context, conn net.Conn) {
	defer c.survive("remote client")
	defer conn.Close()
	remote := conn.RemoteAddr().String()
	// Until its first credential and request come a connection is
	// nobody's: it holds a slot of the client port's own (limits.go), which
	// a newer connection takes if it stays silent; then one of its uid's.
	slot, err := c.limits.admit(c.limits.client, conn, c.log, "remote client")
	if err != nil {
		c.limits.logs.Warn(c.log, "remote client refused", "remote", remote, "err", err)
		conn.SetWriteDeadline(time.Now().Add(requestTimeout))
		api.Encode(conn, &api.Response{V: api.Version, Error: badRequest(err.Error())})
		return
	}
	release := slot.Release
	defer func() { release() }()
	authenticated := false
	var owner uint32 // the uid of the connection's first credential
	dec := api.NewDecoder(conn)
	// The controller stopping ends a wait for the next request or for the
	// client to read an answer (Run joins this goroutine before it closes
	// the spool).
	defer context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })()
	for {
		wait := requestTimeout
		if !authenticated {
			wait = c.limits.ClientHelloTimeout
		}
		conn.SetReadDeadline(time.Now().Add(wait))
		if ctx.Err() != nil { // after the deadline: it may have replaced the AfterFunc's
			return
		}
		dec.SetLimit(api.MaxCredentialLine)
		credLine, err := dec.ReadLine()
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
			return
		}
		if err != nil {
			c.refuseRemote(conn, remote, nil, err)
			return
		}
		// The request may be megabytes (a script): it has the usual
		// time, and the connection stays evictable until it is read.
		conn.SetReadDeadline(time.Now().Add(requestTimeout))
		if ctx.Err() != nil {
			return
		}
		dec.SetLimit(api.MaxMessage)
		reqLine, err := dec.ReadLine()
		if err != nil {
			c.refuseRemote(conn, remote, nil, err)
			return
		}
		if !authenticated {
			slot.Settle() // being checked: no newer connection takes its slot
		}
		conn.SetReadDeadline(time.Time{})
		id, aerr := c.remoteIdentity(ctx, credLine, reqLine)
		if aerr != nil {
			c.log.Warn("remote client refused", "remote", remote, "uid", id.UID, "err", aerr.Message)
			api.Encode(conn, &api.Response{V: api.Version, Error: aerr})
			return
		}
		if authenticated && id.UID != owner {
			c.log.Warn("remote client refused", "remote", remote, "uid", id.UID, "connection_uid", owner)
			api.Encode(conn, &api.Response{V: api.Version, Error: &api.Error{Code: api.CodeAuth,
				Message: "authentication failed: a connection serves one user; this one is uid " + strconv.FormatUint(uint64(owner), 10)}})
			return
		}
		if !authenticated {
			owner = id.UID
			release()
			if release, err = c.limits.user(id.UID); err != nil {
				release = func() {}
				c.log.Warn("remote client refused", "remote", remote, "uid", id.UID, "err", err)
				api.Encode(conn, &api.Response{V: api.Version, Error: badRequest(err.Error())})
				return
			}
			authenticated = true
		}
		var req api.Request
		if err := json.Unmarshal(reqLine, &req); err != nil {
			c.refuseRemote(conn, remote, &id, fmt.Errorf("decode: malformed message: %w", err))
			return
		}
		resp := c.handleSafe(ctx, id, &req)
		resp.V = api.Version
		if err := api.WriteResponse(conn, resp); err != nil {
			return
		}
	}
}

// refuseRemote answers a malformed or unreadable message (not a timeout)
// and logs it.
func (c *Controller) refuseRemote(conn net.Conn, remote string, id *Identity, err error) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return
	}
	args := []any{"remote", remote, "err", err}
	if id != nil {
		args = append(args, "uid", id.UID)
	}
	c.limits.logs.Warn(c.log, "malformed remote request", args...)
	api.Encode(conn, &api.Response{V: api.Version, Error: badRequest(err.Error())})
}

// remoteIdentity checks credLine (an api.Credential) against reqLine, the
// request it must be bound to, and returns the caller. Root is refused:
// a remote host's root is trusted with nothing (admins act from the
// controller host, or as members of the admins).
func (c *Controller) remoteIdentity(ctx context.Context, credLine, reqLine []byte) (Identity, *api.Error) {
	refuse := func(format string, a ...any) *api.Error {
		return &api.Error{Code: api.CodeAuth, Message: "authentication failed: " + fmt.Sprintf(format, a...)}
	}
	var cl api.Credential
	if err := json.Unmarshal(credLine, &cl); err != nil || cl.Munge == "" {
		return Identity{}, refuse("no MUNGE credential before the request (the TCP client port needs one; is the client older than the controller?)")
	}
	sock := c.snap.Load().Cluster.MungeSocket // not c.cfg: this is a connection's goroutine, not the loop
	cred, err := munge.Decode(ctx, sock, cl.Munge)
	id := Identity{UID: cred.UID, GID: cred.GID}
	switch {
	case err != nil && ctx.Err() != nil:
		// The controller is stopping (deposed, or a paused leader woken
		// past its TTL): the check was cut short, not refused. Unavailable
		// sends the client to the next leader; an internal error would end
		// its qsub although nothing is wrong with the request.
		return Identity{}, &api.Error{Code: api.CodeUnavailable, Message: "controller stopping: the credential was not checked"}
	case errors.Is(err, munge.ErrReplayed):
		return id, refuse("replayed MUNGE credential: each credential is good for one request")
	case errors.Is(err, munge.ErrExpired):
		return id, refuse("expired MUNGE credential (made %s ago, good for %s; do the clocks of this host and the controller agree?)",
			c.now().Sub(cred.Encoded).Round(time.Second), cred.TTL)
	case errors.Is(err, munge.ErrRewound):
		return id, refuse("MUNGE credential from the future (the clock of this host is ahead of the controller's)")
	case errors.Is(err, munge.ErrInvalid):
		return Identity{}, refuse("invalid MUNGE credential: made with another munge key (is /etc/munge/munge.key the same on every host?) or altered")
	case errors.Is(err, munge.ErrBadCredential):
		return Identity{}, refuse("malformed MUNGE credential")
	case errors.Is(err, munge.ErrSocket):
		c.log.Error("cannot decode a client credential: the controller's munged does not answer", "socket", sock, "err", err)
		return Identity{}, &api.Error{Code: api.CodeInternal, Message: "the controller cannot reach its munged: ask an admin"}
	case err != nil:
		return Identity{}, refuse("MUNGE credential refused: %v", err)
	}
	if !bytes.Equal(cred.Payload, api.RequestPayload(reqLine)) {
		return id, refuse("the MUNGE credential was made for another request (the request was changed after it was signed)")
	}
	if cred.UID == 0 {
		return id, refuse("root is refused on the TCP client port: run admin commands on the controller host")
	}
	id.User, id.Groups = nssUser(cred.UID, cred.GID, c.now())
	id.Munge = true
	return id, nil
}

// nssGroups caches what NSS says about a uid: login name and groups.
var nssGroups struct {
	sync.Mutex
	m map[uint32]nssEntry
}

type nssEntry struct {
	name   string
	groups []uint32
	at     time.Time
}

// nssUser is uid's login name (or the uid in decimal) and its
// supplementary groups as the controller's NSS knows them (as Slurm does:
// the credential carries only uid and gid); gid, the credential's, is
// left out of them.
func nssUser(uid, gid uint32, now time.Time) (string, []uint32) {
	nssGroups.Lock()
	defer nssGroups.Unlock()
	if e, ok := nssGroups.m[uid]; ok && now.Sub(e.at) < userNameTTL {
		return e.name, e.groups
	}
	e := nssEntry{name: strconv.FormatUint(uint64(uid), 10), at: now}
	if u, err := user.LookupId(e.name); err == nil {
		e.name = u.Username
		if ids, err := u.GroupIds(); err == nil {
			for _, s := range ids {
				if g, err := strconv.ParseUint(s, 10, 32); err == nil && uint32(g) != gid {
					e.groups = append(e.groups, uint32(g))
				}
			}
		}
	}
	if nssGroups.m == nil {
		nssGroups.m = map[uint32]nssEntry{}
	}
	nssGroups.m[uid] = e
	return e.name, e.groups
}
