package sim

import (
	"bytes"
	"strings"
	"testing"
)

func TestProgress(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, 100, 2)
	p.Func(0)(50)
	if got := b.String(); !strings.Contains(got, " 25.0% 50/200 jobs") || !strings.HasPrefix(got, "\r[==========          ") {
		t.Errorf("bar = %q", got)
	}
	b.Reset()
	p.Done()
	if strings.TrimSpace(b.String()) != "" {
		t.Errorf("Done left %q", b.String())
	}
}
