package noded

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/api"
)

// markerFile names the file in checkpoint_root that identifies the
// filesystem holding it: the first node daemon to look writes a random
// id, every other one reads it. Nodes that read the same id share the
// directory; a node that reads another does not.
const markerFile = ".sharq-checkpoint-root"

// maxMarker bounds what is read of a marker file.
const maxMarker = 128

// checkpointFS makes root (when missing), reads or writes its marker and
// names its filesystem, for the node's hello.
func checkpointFS(root string) *api.CheckpointFS {
	fs := &api.CheckpointFS{Root: root}
	if err := os.MkdirAll(root, 0o755); err != nil {
		fs.Error = fmt.Sprintf("checkpoint root %s: %v", root, err)
		return fs
	}
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err == nil {
		fs.Type = fsTypeName(int64(st.Type))
	}
	id, err := marker(root)
	if err != nil {
		fs.Error = fmt.Sprintf("checkpoint root %s: marker: %v", root, err)
		return fs
	}
	fs.Marker = id
	return fs
}

// marker reads root's marker, creating it first when there is none. The
// new id is written to a private file and linked into place, so a reader
// on another node never sees a half-written one and two nodes racing to
// create it agree on the winner's.
func marker(root string) (string, error) {
	path := filepath.Join(root, markerFile)
	if id, err := readMarker(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return id, err
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(root, ".marker-")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(b) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return readMarker(path)
}

func readMarker(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMarker+1))
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if len(b) > maxMarker || id == "" || strings.ContainsFunc(id, func(r rune) bool { return r < '!' || r > '~' }) {
		return "", fmt.Errorf("%s is not a sharq marker (remove it to have one written)", path)
	}
	return id, nil
}

// fsTypeName names the common filesystems by their statfs magic number.
func fsTypeName(magic int64) string {
	switch magic {
	case 0xEF53:
		return "ext4"
	case 0x58465342:
		return "xfs"
	case 0x9123683E:
		return "btrfs"
	case 0x01021994:
		return "tmpfs"
	case 0x6969:
		return "nfs"
	case 0xFF534D42, 0xFE534D42:
		return "cifs"
	case 0x0BD00BD0:
		return "lustre"
	case 0x47504653:
		return "gpfs"
	case 0x19830326:
		return "beegfs"
	case 0x00C36400:
		return "ceph"
	case 0x65735546:
		return "fuse"
	case 0x2FC12FC1:
		return "zfs"
	case 0x794C7630:
		return "overlay"
	}
	return fmt.Sprintf("0x%x", magic)
}
