package noded

import (
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/conf"
)

func TestCheckMounts(t *testing.T) {
	dir := t.TempDir()
	got := checkMounts([]conf.Mount{{Path: dir}, {Path: dir + "/gone", ReadOnly: true}})
	if len(got) != 1 || !strings.Contains(got[0], "mount "+dir+"/gone") {
		t.Errorf("checkMounts = %q", got)
	}
}
