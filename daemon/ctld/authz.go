package ctld

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"

	"github.com/sharq-hpc/sharq/conf"
)

// principals is a compiled list of users and groups: "alice", "1001",
// "@vision" (a Unix group), or "*" (anyone).
type principals struct {
	any   bool
	users map[string]bool
	uids  map[uint32]bool
	gids  map[uint32]bool
}

// compilePrincipals resolves group names once (at config load). Unknown
// groups are returned as warnings: they admit nobody.
func compilePrincipals(list []string) (principals, []string) {
	p := principals{users: map[string]bool{}, uids: map[uint32]bool{}, gids: map[uint32]bool{}}
	var warnings []string
	for _, e := range list {
		switch {
		case e == "*":
			p.any = true
		case strings.HasPrefix(e, "@"):
			name := e[1:]
			if gid, err := strconv.ParseUint(name, 10, 32); err == nil {
				p.gids[uint32(gid)] = true
				continue
			}
			g, err := user.LookupGroup(name)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("group %q: %v", name, err))
				continue
			}
			gid, _ := strconv.ParseUint(g.Gid, 10, 32)
			p.gids[uint32(gid)] = true
		default:
			if uid, err := strconv.ParseUint(e, 10, 32); err == nil {
				p.uids[uint32(uid)] = true
			} else {
				p.users[e] = true
			}
		}
	}
	return p, warnings
}

func (p principals) admits(id Identity) bool {
	if p.any || p.users[id.User] || p.uids[id.UID] || p.gids[id.GID] {
		return true
	}
	for _, g := range id.Groups {
		if p.gids[g] {
			return true
		}
	}
	return false
}

// authConfig is who may do what under the current configuration.
type authConfig struct {
	admins principals
	shares map[string]principals
}

func compileAuth(cfg *conf.Config) (authConfig, []string) {
	a := authConfig{shares: map[string]principals{}}
	var warnings []string
	a.admins, warnings = compilePrincipals(cfg.Cluster.Admins)
	for _, sh := range cfg.Shares {
		p, w := compilePrincipals(sh.Users)
		a.shares[sh.Name] = p
		for _, x := range w {
			warnings = append(warnings, "share "+sh.Name+": "+x)
		}
	}
	return a, warnings
}

// isAdmin: root is always an admin.
func (a authConfig) isAdmin(id Identity) bool { return id.UID == 0 || a.admins.admits(id) }
