package hostproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// cgroups makes one memory cgroup per job run under a parent of its own.
type cgroups struct {
	v2     bool
	parent string // the parent cgroup's directory
}

const cgroupRoot = "/sys/fs/cgroup"

// newCgroups finds a writable memory controller and makes parent (a name)
// under it; nil when there is none.
func newCgroups(parent string) (*cgroups, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(cgroupRoot, &st); err != nil {
		return nil, err
	}
	c := &cgroups{}
	switch {
	case st.Type == unix.CGROUP2_SUPER_MAGIC:
		c.v2 = true
		c.parent = filepath.Join(cgroupRoot, parent)
		ctl, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.subtree_control"))
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(ctl, []byte("memory")) {
			return nil, errors.New("memory controller not enabled at " + cgroupRoot)
		}
	default:
		mem := filepath.Join(cgroupRoot, "memory")
		if err := unix.Statfs(mem, &st); err != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
			return nil, fmt.Errorf("no cgroup v1 memory controller at %s", mem)
		}
		c.parent = filepath.Join(mem, parent)
	}
	if err := os.Mkdir(c.parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	if c.v2 {
		if err := os.WriteFile(filepath.Join(c.parent, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// create makes name's cgroup with a memory limit (swap included).
func (c *cgroups) create(name string, limit int64) (string, error) {
	dir := filepath.Join(c.parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	v := []byte(strconv.FormatInt(limit, 10))
	var err error
	if c.v2 {
		err = os.WriteFile(filepath.Join(dir, "memory.max"), v, 0)
		if err == nil {
			// No swap: over the limit is an OOM kill, not paging.
			if e := os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0); e != nil && !errors.Is(e, os.ErrNotExist) {
				err = e
			}
		}
	} else {
		err = os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), v, 0)
		if err == nil {
			// memsw exists with swap accounting; it may not go below the limit.
			if e := os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), v, 0); e != nil && !errors.Is(e, os.ErrNotExist) {
				err = e
			}
		}
	}
	if err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("cgroup %s: %w", dir, err)
	}
	return dir, nil
}

// enter moves pid into the cgroup at dir (cgroup v1; v2 starts the
// process inside it).
func enter(dir string, pid int) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// oomKills reads the cgroup's oom_kill count.
func (c *cgroups) oomKills(dir string) (int, error) {
	file := "memory.oom_control"
	if c.v2 {
		file = "memory.events"
	}
	f, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
			return strconv.Atoi(v)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no oom_kill count", file)
}

// kill sends sig to every process of the cgroup.
func kill(dir string, sig unix.Signal) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			_ = unix.Kill(pid, sig)
		}
	}
}

// remove deletes the cgroup (its processes have exited).
func remove(dir string) error {
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cgroup %s: %w", dir, err)
	}
	return nil
}

// RemoveCgroupParent removes the parent cgroup WithCgroupParent named,
// once no Runtime uses it (tests clean up with it).
func RemoveCgroupParent(name string) error {
	var errs []error
	for _, dir := range []string{filepath.Join(cgroupRoot, name), filepath.Join(cgroupRoot, "memory", name)} {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
