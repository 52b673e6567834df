package ctrd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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
	used, err := charMajors(f)
	if err != nil {
		return 0, err
	}
	for _, m := range localMajors {
		if !used[m] {
			return m, nil
		}
	}
	return 0, ErrNoFreeMajor
}

// charMajors parses /proc/devices' "Character devices:" section.
func charMajors(r io.Reader) (map[uint32]bool, error) {
	used := map[uint32]bool{}
	sc := bufio.NewScanner(r)
	inChar := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "Character devices:":
			inChar = true
		case line == "Block devices:":
			inChar = false
		case inChar:
			if fields := strings.Fields(line); len(fields) == 2 {
				if n, err := strconv.ParseUint(fields[0], 10, 32); err == nil {
					used[uint32(n)] = true
				}
			}
		}
	}
	return used, sc.Err()
}

// MakeFakeGPUs creates paths[i] as the character device FakeGPUMajor():i,
// mode 0666, making missing parent directories (0755). With replace,
// whatever is at a path is removed first; without it, an existing file is
// an error.
func MakeFakeGPUs(paths []string, replace bool) error {
	major, err := FakeGPUMajor()
	if err != nil {
		return fmt.Errorf("fake GPUs: %w", err)
	}
	for i, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("fake GPU %s: %w", p, err)
		}
		if replace {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("fake GPU %s: %w", p, err)
			}
		}
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(major, uint32(i)))); err != nil {
			return fmt.Errorf("fake GPU %s: %w", p, err)
		}
		if err := os.Chmod(p, 0o666); err != nil { // mknod's mode is cut by the umask
			return fmt.Errorf("fake GPU %s: %w", p, err)
		}
	}
	return nil
}
