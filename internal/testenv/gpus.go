package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Fake GPUs are character device nodes with a major number no driver has
// registered, taken from the ranges Linux reserves for local and
// experimental use (60-63, 120-127; 240-254 is left out because dynamic
// majors are handed out from there). Minor i is GPU i, so every fake GPU is
// a distinct device to the device cgroup. Opening one:
//   - allowed by the container's device cgroup: fails with ENXIO ("No such
//     device or address"): the cgroup let the open through to the kernel,
//     which found no driver;
//   - denied by the device cgroup: fails with EPERM ("Operation not
//     permitted") before any driver lookup.
//
// So tests tell "allowed" from "denied" by the error, for any number of
// GPUs, without opening a real device. (Major 1's null/zero/full/random/
// urandom open fine but give only five distinct devices.)
var localMajors = []uint32{60, 61, 62, 63, 120, 121, 122, 123, 124, 125, 126, 127}

// ErrNoFreeMajor means every local/experimental major is registered.
var ErrNoFreeMajor = errors.New("no unregistered local/experimental character major")

// FakeGPUMajor returns the major number MakeFakeGPUs uses: the first of the
// local/experimental majors /proc/devices does not list.
func FakeGPUMajor() (uint32, error) {
	f, err := os.Open("/proc/devices")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	used := map[uint32]bool{}
	sc := bufio.NewScanner(f)
	inChar := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "Character devices:":
			inChar = true
		case line == "Block devices:":
			inChar = false
		case inChar:
			fields := strings.Fields(line)
			if len(fields) == 2 {
				if n, err := strconv.ParseUint(fields[0], 10, 32); err == nil {
					used[uint32(n)] = true
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	for _, m := range localMajors {
		if !used[m] {
			return m, nil
		}
	}
	return 0, ErrNoFreeMajor
}

// MakeFakeGPUs creates dir/nvidia0 .. dir/nvidia<n-1>: character devices
// FakeGPUMajor():i, mode 0666. It returns their paths in index order.
func MakeFakeGPUs(dir string, n int) ([]string, error) {
	major, err := FakeGPUMajor()
	if err != nil {
		return nil, fmt.Errorf("fake GPUs: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fake GPUs: %w", err)
	}
	paths := make([]string, n)
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("nvidia%d", i))
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(major, uint32(i)))); err != nil {
			return nil, fmt.Errorf("fake GPU %s: %w", p, err)
		}
		// mknod's mode is cut by the umask.
		if err := os.Chmod(p, 0o666); err != nil {
			return nil, fmt.Errorf("fake GPU %s: %w", p, err)
		}
		paths[i] = p
	}
	return paths, nil
}
