package ctld

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os/user"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Identity is who is on the other end of a client connection, as the kernel
// says (SO_PEERCRED, SO_PEERGROUPS): nothing a client sends can change it.
type Identity struct {
	UID    uint32
	GID    uint32
	Groups []uint32 // supplementary groups
	User   string   // login name, or the uid in decimal when it has none
	// Munge: the identity comes from a MUNGE credential (the TCP client
	// port), not from the kernel of this host.
	Munge bool
}

// peerIdentity reads the credentials of a Unix socket peer.
func peerIdentity(c *net.UnixConn) (Identity, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Identity{}, fmt.Errorf("peer credentials: %w", err)
	}
	var (
		cred   *unix.Ucred
		groups []uint32
		opErr  error
	)
	err = raw.Control(func(fd uintptr) {
		cred, opErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if opErr != nil {
			return
		}
		groups, opErr = peerGroups(int(fd))
	})
	if err == nil {
		err = opErr
	}
	if err != nil {
		return Identity{}, fmt.Errorf("peer credentials: %w", err)
	}
	return Identity{UID: cred.Uid, GID: cred.Gid, Groups: groups, User: userName(cred.Uid, time.Now())}, nil
}

// userNames caches uid -> login name: a lookup reads /etc/passwd (or asks
// NSS), too slow to do for every connection of a busy cluster.
var userNames struct {
	sync.Mutex
	m map[uint32]cachedName
}

type cachedName struct {
	name string
	at   time.Time
}

const userNameTTL = time.Minute

// userName is uid's login name, or the uid in decimal when it has none.
func userName(uid uint32, now time.Time) string {
	userNames.Lock()
	defer userNames.Unlock()
	if c, ok := userNames.m[uid]; ok && now.Sub(c.at) < userNameTTL {
		return c.name
	}
	name := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	if userNames.m == nil {
		userNames.m = map[uint32]cachedName{}
	}
	userNames.m[uid] = cachedName{name, now}
	return name
}

// peerGroups reads SO_PEERGROUPS (Linux 4.13+): the peer's supplementary
// groups at connect time.
func peerGroups(fd int) ([]uint32, error) {
	buf := make([]byte, 4*64)
	for {
		n := uint32(len(buf))
		_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_PEERGROUPS,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
		if errno == unix.ERANGE && int(n) > len(buf) {
			buf = make([]byte, n)
			continue
		}
		if errno != 0 {
			return nil, errors.New("SO_PEERGROUPS: " + errno.Error())
		}
		out := make([]uint32, n/4)
		for i := range out {
			out[i] = binary.NativeEndian.Uint32(buf[4*i:])
		}
		return out, nil
	}
}
