package localcluster

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

// Fake GPUs are character devices with a major number no driver has
// registered, from the ranges Linux reserves for local and experimental
// use (as in internal/testenv): the device cgroup tells them apart, and
// opening one that a job was given fails with ENXIO ("No such device or
// address") while one it was not given fails with EPERM.
var localMajors = []uint32{60, 61, 62, 63, 120, 121, 122, 123, 124, 125, 126, 127}

// ErrNoFreeMajor means every local/experimental character major is taken.
var ErrNoFreeMajor = errors.New("no unregistered local/experimental character major")

// fakeGPUMajor returns the first local/experimental major /proc/devices
// does not list.
func fakeGPUMajor() (uint32, error) {
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
func charMajors(f *os.File) (map[uint32]bool, error) {
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
			if fields := strings.Fields(line); len(fields) == 2 {
				if n, err := strconv.ParseUint(fields[0], 10, 32); err == nil {
					used[uint32(n)] = true
				}
			}
		}
	}
	return used, sc.Err()
}

// makeFakeGPUs creates paths[i] as character device major:i, mode 0666,
// replacing whatever is there.
func makeFakeGPUs(paths []string) error {
	major, err := fakeGPUMajor()
	if err != nil {
		return fmt.Errorf("fake GPUs: %w", err)
	}
	for i, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("fake GPU %s: %w", p, err)
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("fake GPU %s: %w", p, err)
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
