package conf

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Mount is one entry of a mounts list: a host path bind-mounted at the
// same path into every job (nosuid), read-only when ReadOnly.
type Mount struct {
	Path     string
	ReadOnly bool
}

// String gives the entry as written in the file: "/datasets:ro".
func (m Mount) String() string {
	if m.ReadOnly {
		return m.Path + ":ro"
	}
	return m.Path
}

// reservedMountDirs are what a job container makes for itself: a mount at
// or below them would hide the kernel's view (or sharq's own files).
var reservedMountDirs = []string{"/proc", "/sys", "/dev", "/run/.sharq"}

// MaxMounts bounds a mounts list.
const MaxMounts = 64

// ParseMount reads "PATH", "PATH:ro" or "PATH:rw". PATH must be absolute
// and clean, not /, and not at or below /proc, /sys or /dev.
func ParseMount(s string) (Mount, error) {
	m := Mount{Path: s}
	if p, mode, ok := strings.Cut(s, ":"); ok {
		m.Path = p
		switch mode {
		case "ro":
			m.ReadOnly = true
		case "rw":
		default:
			return Mount{}, fmt.Errorf("mount %q: unknown mode %q (want PATH, PATH:ro or PATH:rw)", s, mode)
		}
	}
	switch {
	case m.Path == "":
		return Mount{}, fmt.Errorf("mount %q: empty path", s)
	case !filepath.IsAbs(m.Path):
		return Mount{}, fmt.Errorf("mount %q: %q is not an absolute path", s, m.Path)
	case filepath.Clean(m.Path) != m.Path:
		return Mount{}, fmt.Errorf("mount %q: write the path as %q", s, filepath.Clean(m.Path))
	case m.Path == "/":
		return Mount{}, fmt.Errorf("mount %q: / would hide the job's own root", s)
	case strings.ContainsAny(m.Path, "\x00,\n"):
		return Mount{}, fmt.Errorf("mount %q: the path has a comma, newline or NUL", s)
	}
	for _, r := range reservedMountDirs {
		if m.Path == r || strings.HasPrefix(m.Path, r+"/") {
			return Mount{}, fmt.Errorf("mount %q: %s belongs to the job container itself (no mounts at or below /proc, /sys, /dev)", s, r)
		}
	}
	return m, nil
}

// mounts reads a mounts list, each entry checked, none twice (here or in
// also, the cluster-wide list a partition adds to).
func (t *table) mounts(key string, also []Mount) []Mount {
	ss, ok := t.strings(key)
	if !ok {
		return nil
	}
	if len(ss)+len(also) > MaxMounts {
		t.errf(key, "more than %d mounts", MaxMounts)
		return nil
	}
	var out []Mount
	seen := map[string]bool{}
	for _, m := range also {
		seen[m.Path] = true
	}
	for _, s := range ss {
		m, err := ParseMount(s)
		if err != nil {
			t.errf(key, "%v", err)
			continue
		}
		if seen[m.Path] {
			t.errf(key, "mount %s is listed twice (here or in [cluster] mounts)", m.Path)
			continue
		}
		seen[m.Path] = true
		out = append(out, m)
	}
	return out
}
