//go:build !unit

package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	cases := []struct {
		name    string
		content string
		mode    os.FileMode
		uid     int
		dir     bool
		missing bool
		want    string
		wantErr string
	}{
		{name: "root 0600", content: "s3cret\n", mode: 0o600, want: "s3cret"},
		{name: "root 0400", content: "  s3cret  ", mode: 0o400, want: "s3cret"},
		{name: "world readable", content: "s", mode: 0o644, wantErr: "group and other must have no access"},
		{name: "group readable", content: "s", mode: 0o640, wantErr: "group and other must have no access"},
		{name: "other writable", content: "s", mode: 0o602, wantErr: "group and other must have no access"},
		{name: "not owned by root", content: "s", mode: 0o600, uid: 1000, wantErr: "owned by uid 1000"},
		{name: "empty", content: " \n", mode: 0o600, wantErr: "empty"},
		{name: "too large", content: strings.Repeat("x", maxSecret+1), mode: 0o600, wantErr: "larger than"},
		{name: "directory", dir: true, wantErr: "not a regular file"},
		{name: "missing", missing: true, wantErr: "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "secret")
			switch {
			case c.dir:
				os.Mkdir(path, 0o700)
			case !c.missing:
				if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, c.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(path, c.uid, c.uid); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Read(path)
			if c.wantErr != "" {
				if !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want ErrFile with %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Read = %q, %v; want %q", got, err, c.want)
			}
		})
	}
	if _, err := Read(""); !errors.Is(err, ErrFile) {
		t.Errorf("no path: err = %v", err)
	}
}
