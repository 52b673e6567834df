package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data (mode 0600) through path+".tmp". With
// durable, the file and its directory are synced before Write returns;
// without, the replacement is atomic but may be lost in a power failure.
func Write(path string, data []byte, durable bool) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if !durable {
		return nil
	}
	return syncDir(filepath.Dir(path))
}

// syncDir syncs the directory dir, so that the names created, renamed or
// removed in it survive a power failure.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
