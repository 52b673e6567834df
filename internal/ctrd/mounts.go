package ctrd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

type mount struct{ point, fstype string }

// parseMountinfo reads /proc/self/mountinfo's mount points and types.
func parseMountinfo(r io.Reader) []mount {
	var out []mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// id parent major:minor root mount-point options [optional...] - fstype source super-options
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		out = append(out, mount{point: unescapeMount(fields[4]), fstype: fields[sep+1]})
	}
	return out
}

// MountsUnder lists the mount points strictly below the given directories,
// deepest first.
func MountsUnder(dirs ...string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var points []string
	for _, m := range parseMountinfo(f) {
		for _, d := range dirs {
			if strings.HasPrefix(m.point, filepath.Clean(d)+"/") {
				points = append(points, m.point)
				break
			}
		}
	}
	sort.SliceStable(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	return points, nil
}

// UnmountUnder lazily unmounts every mount point below dirs, deepest
// first, so that removing a directory never walks into a container's bind
// mounts.
func UnmountUnder(dirs ...string) error {
	points, err := MountsUnder(dirs...)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, ok := octal(s[i+1 : i+4]); ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func octal(s string) (byte, bool) {
	var v int
	for _, ch := range s {
		if ch < '0' || ch > '7' {
			return 0, false
		}
		v = v*8 + int(ch-'0')
	}
	if v > 255 {
		return 0, false
	}
	return byte(v), true
}
