package usageplot

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func TestWrite(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	for _, format := range []string{"svg", "png"} {
		b.Reset()
		pts := []api.UsagePoint{{Time: now, Share: "a", Owned: 2, Borrowed: 1}, {Time: now.Add(time.Hour), Share: "a", Owned: 1},
			{Time: now, Share: "b", Owned: 3}, {Time: now.Add(time.Hour), Share: "b", Borrowed: 2}}
		if err := Write(&b, format, pts, time.UTC); err != nil || b.Len() < 1000 {
			t.Fatalf("%s plot: %v, %d bytes", format, err, b.Len())
		}
	}
	b.Reset()
	if err := Write(&b, "svg", nil, time.UTC); err != nil || !strings.Contains(b.String(), "no samples") {
		t.Fatalf("empty plot: %v", err)
	}
}
