package ctld

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

// Bounds of what a user sends. qsub checks most of this too, but raw
// requests and qalter do not go through qsub: the controller checks
// everything itself, and refuses what is not plain text where it is shown
// to others (a name with a newline once forged a block in another user's
// qstat -f; escape sequences reached other users' terminals).
const (
	maxNameLen    = 236 // PBS's job name limit
	maxPathLen    = 4096
	maxImageLen   = 512
	maxEnvVars    = 4096
	maxEnvKeyLen  = 1024
	maxEnvValLen  = 128 << 10
	maxArgs       = 4096
	maxArgLen     = 128 << 10
	maxDeps       = 1024
	maxNodes      = 1 << 16
	maxPerNodeRes = 1 << 20 // GPUs or CPUs per node
)

// checkName: printable, no spaces, at most maxNameLen bytes (PBS's rule).
func checkName(s string) error {
	if s == "" || len(s) > maxNameLen {
		return fmt.Errorf("job name must have 1 to %d characters", maxNameLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("job name %q is not valid UTF-8", s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("job name %q: only printable characters without spaces", s)
		}
	}
	return nil
}

// plain says whether s is valid UTF-8 without control characters (C0, DEL
// or C1: newlines, tabs and escape sequences included).
func plain(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return false
		}
	}
	return true
}

// checkPath: absolute, plain, bounded.
func checkPath(what, p string) error {
	switch {
	case len(p) > maxPathLen:
		return fmt.Errorf("%s is longer than %d bytes", what, maxPathLen)
	case !plain(p):
		return fmt.Errorf("%s %q has control characters", what, p)
	case !filepath.IsAbs(p):
		return fmt.Errorf("%s %q is not absolute", what, p)
	}
	return nil
}

// checkSpecStrings checks every string of a submitted job.
func checkSpecStrings(j *api.Job, admin bool) error {
	if err := checkName(j.Name); err != nil {
		return err
	}
	if err := checkPath("working directory", j.WorkDir); err != nil {
		return err
	}
	for _, p := range []struct{ what, v string }{{"output path", j.Stdout}, {"error path", j.Stderr}, {"shell", j.Shell}} {
		if p.v != "" {
			if err := checkPath(p.what, p.v); err != nil {
				return err
			}
		}
	}
	if len(j.Image) > maxImageLen || !plain(j.Image) || strings.ContainsRune(j.Image, ' ') {
		return fmt.Errorf("image %.80q: at most %d printable characters without spaces", j.Image, maxImageLen)
	}
	if strings.IndexByte(j.Script, 0) >= 0 || !utf8.ValidString(j.Script) {
		return fmt.Errorf("the script is not text (NUL bytes or invalid UTF-8)")
	}
	if len(j.Command) > maxArgs {
		return fmt.Errorf("command has more than %d arguments", maxArgs)
	}
	for _, a := range j.Command {
		if len(a) > maxArgLen || strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("command argument %.40q: NUL byte or longer than %d bytes", a, maxArgLen)
		}
	}
	if len(j.Env) > maxEnvVars {
		return fmt.Errorf("more than %d environment variables", maxEnvVars)
	}
	for k, v := range j.Env {
		if k == "" || len(k) > maxEnvKeyLen || !plain(k) || strings.ContainsAny(k, "= ") {
			return fmt.Errorf("environment variable name %.60q: 1 to %d printable characters, no '=' or space", k, maxEnvKeyLen)
		}
		if len(v) > maxEnvValLen || strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) {
			return fmt.Errorf("environment variable %s: value with a NUL byte, not UTF-8, or longer than %d bytes", k, maxEnvValLen)
		}
	}
	switch {
	case j.Hold == "" || j.Hold == "u":
	case j.Hold == "o" && admin:
	default:
		return fmt.Errorf("hold %q: only a user hold (u) can be asked for at submit", j.Hold)
	}
	if err := checkDeps(j.Deps); err != nil {
		return err
	}
	r := j.Resources
	if r.Nodes > maxNodes || r.GPUsPerNode > maxPerNodeRes || r.CPUsPerNode > maxPerNodeRes {
		return fmt.Errorf("resources: at most %d nodes and %d GPUs or CPUs per node", maxNodes, maxPerNodeRes)
	}
	if len(r.Group) > maxGroupLen {
		return fmt.Errorf("place=group: a level name of %d bytes (at most %d)", len(r.Group), maxGroupLen)
	}
	if j.ArrayMax > jobid.MaxArraySize {
		return fmt.Errorf("array %%max %d is above %d", j.ArrayMax, jobid.MaxArraySize)
	}
	if !j.NotBefore.IsZero() && (j.NotBefore.Year() < 1970 || j.NotBefore.Year() > 9999) {
		return fmt.Errorf("start time %v is out of range", j.NotBefore)
	}
	return nil
}

// checkDeps checks dependency types and ids (one job, array or subjob each).
func checkDeps(deps []api.Dep) error {
	if len(deps) > maxDeps {
		return fmt.Errorf("more than %d dependencies", maxDeps)
	}
	for _, d := range deps {
		if err := d.Type.Check(); err != nil {
			return err
		}
		if err := jobid.CheckDepOn(d.On); err != nil {
			return err
		}
	}
	return nil
}
