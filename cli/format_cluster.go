package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// borrowLimit shows a share's borrow limit: a percentage of its quota,
// "unlim", or "-" for strategies that never borrow.
func borrowLimit(s api.ShareStatus) string {
	if s.Strategy != "LEND_AND_BORROW" {
		return "-"
	}
	if s.BorrowLimit < 0 {
		return "unlim"
	}
	return strconv.Itoa(s.BorrowLimit) + "%"
}

// Bar characters: distinct without colour too.
const (
	barOwn      = "█"
	barBorrowed = "▓"
	barLent     = "░"
	barIdle     = "·"
	barWidth    = 20
)

// usageBar draws a share's GPUs: its own quota in use, what it borrowed on
// top, what it lent out of its idle quota, and what is idle, all on one
// scale (scale GPUs fill barWidth cells).
func usageBar(s api.ShareStatus, scale int, color bool) (text, raw string) {
	own := max(s.InUse-s.Borrowed, 0)
	segs := []struct {
		n         int
		ch, style string
	}{
		{own, barOwn, styleGreen},
		{max(s.Borrowed, 0), barBorrowed, styleYellow},
		{max(s.Lent, 0), barLent, styleCyan},
		{max(s.Quota-own-s.Lent, 0), barIdle, styleDim},
	}
	pos := func(n int) int { return int(math.Round(float64(n) * barWidth / float64(scale))) }
	var t, r strings.Builder
	cum, at := 0, 0
	for _, sg := range segs {
		cum += sg.n
		k := max(pos(cum)-at, 0)
		if sg.n > 0 && k == 0 && at < barWidth {
			k = 1 // never hide a non-zero part
		}
		at += k
		part := strings.Repeat(sg.ch, k)
		t.WriteString(part)
		if color {
			r.WriteString(paint(part, sg.style))
		} else {
			r.WriteString(part)
		}
	}
	return t.String(), r.String()
}

// writeShareTable writes qstat -Q: one row per share with its quota, what
// it uses, borrows and lends. On a terminal, borrowing is yellow, lending
// cyan, and a bar shows each share's GPUs.
func writeShareTable(w io.Writer, shares []api.ShareStatus, sys *Sys) error {
	t := &table{Fit: sys.Terminal, Color: sys.Color, Cols: []column{
		{Head: []string{"", "Share"}, Width: 16, Trunc: true},
		{Head: []string{"", "Partition"}, Width: 12, Trunc: true},
		{Head: []string{"", "Strategy"}, Width: 15},
		{Head: []string{"GPUs", "Quota"}, Width: 5, Right: true},
		{Head: []string{"GPUs", "InUse"}, Width: 5, Right: true},
		{Head: []string{"GPUs", "Borrowed"}, Width: 8, Right: true},
		{Head: []string{"GPUs", "Lent"}, Width: 5, Right: true},
		{Head: []string{"Borrow", "Limit"}, Width: 6, Right: true},
		{Head: []string{"Jobs", "Pending"}, Width: 7, Right: true},
		{Head: []string{"Jobs", "Running"}, Width: 7, Right: true},
		{Head: []string{"", "Preempted"}, Width: 9, Right: true},
		{Head: []string{"", "State"}, Width: 8},
	}}
	scale := 1
	for _, s := range shares {
		scale = max(scale, s.Quota, s.InUse+s.Lent, s.Quota+s.Borrowed)
	}
	if sys.Terminal {
		t.Cols = append(t.Cols, column{Head: []string{"", "Usage"}})
	}
	for _, s := range shares {
		borrowed := cell{Text: strconv.Itoa(s.Borrowed)}
		if s.Borrowed > 0 {
			borrowed.Style = styleYellow
		}
		lent := cell{Text: strconv.Itoa(s.Lent)}
		if s.Lent > 0 {
			lent.Style = styleCyan
		}
		state := cell{Text: s.State}
		if s.State != "" && s.State != "ENABLED" {
			state.Style = styleRed
		}
		row := []cell{
			{Text: s.Name}, {Text: s.Partition}, {Text: s.Strategy},
			{Text: strconv.Itoa(s.Quota)}, {Text: strconv.Itoa(s.InUse)}, borrowed, lent,
			{Text: borrowLimit(s)}, {Text: strconv.Itoa(s.Pending)}, {Text: strconv.Itoa(s.Running)},
			{Text: strconv.Itoa(s.Preemptions)}, state,
		}
		if sys.Terminal {
			text, raw := usageBar(s, scale, sys.Color)
			row = append(row, cell{Text: text, Raw: raw})
		}
		t.Rows = append(t.Rows, row)
	}
	if err := t.render(w); err != nil {
		return err
	}
	if !sys.Terminal {
		return nil
	}
	legend := func(ch, style, what string) string {
		if sys.Color {
			ch = paint(ch, style)
		}
		return ch + " " + what
	}
	_, err := fmt.Fprintf(w, "\nUsage: %s  %s  %s  %s\n",
		legend(barOwn, styleGreen, "own quota in use"), legend(barBorrowed, styleYellow, "borrowed from other shares"),
		legend(barLent, styleCyan, "lent to other shares"), legend(barIdle, styleDim, "idle quota"))
	return err
}

// writeNodeTable writes sharqctl show nodes.
func writeNodeTable(w io.Writer, nodes []api.NodeStatus, sys *Sys) error {
	t := &table{Fit: sys.Terminal, Color: sys.Color, Cols: []column{
		{Head: []string{"Node"}, Width: 16, Trunc: true},
		{Head: []string{"Partition"}, Width: 12, Trunc: true},
		{Head: []string{"State"}, Width: 7},
		{Head: []string{"GPUs"}, Width: 4, Right: true},
		{Head: []string{"Used"}, Width: 4, Right: true},
		{Head: []string{"Used GPUs"}, Width: 12, Trunc: true},
		{Head: []string{"Source"}, Width: 6},
		{Head: []string{"Last seen"}, Width: 19},
		{Head: []string{"Checkpoints"}, Width: 12, Trunc: true},
		{Head: []string{"Problems"}, Width: 8},
	}}
	loc := sys.loc()
	for _, n := range nodes {
		used := slices.Clone(n.UsedGPUs)
		sort.Ints(used)
		usedList := compressInts(used)
		if usedList == "" {
			usedList = "-"
		}
		src := "-"
		if n.Inventory != nil && n.Inventory.Source != "" {
			src = n.Inventory.Source
		}
		// The checkpoint root's filesystem and marker: nodes of a
		// partition that show the same marker share the directory.
		ckpt := "-"
		if n.Inventory != nil && n.Inventory.Checkpoint != nil && n.Inventory.Checkpoint.Marker != "" {
			ck := n.Inventory.Checkpoint
			ckpt = ck.Type + " " + ck.Marker[:min(8, len(ck.Marker))]
		}
		seen := "-"
		if !n.LastSeen.IsZero() {
			seen = n.LastSeen.In(loc).Format("2006-01-02 15:04:05")
		}
		state := cell{Text: n.State}
		switch n.State {
		case "up":
			state.Style = styleGreen
		case "down", "unhealthy":
			state.Style = styleRed
		default:
			state.Style = styleYellow
		}
		t.Rows = append(t.Rows, []cell{
			{Text: n.Name}, {Text: n.Partition}, state, {Text: strconv.Itoa(n.GPUs)},
			{Text: strconv.Itoa(len(n.UsedGPUs))}, {Text: usedList}, {Text: src}, {Text: seen}, {Text: ckpt},
			{Text: strings.Join(n.Problems, "; "), Style: styleRed},
		})
	}
	return t.render(w)
}

// writeControllerTable is sharqctl show controllers.
func writeControllerTable(w io.Writer, cs []api.ControllerStatus, sys *Sys) error {
	t := &table{Fit: sys.Terminal, Color: sys.Color, Cols: []column{
		{Head: []string{"Host"}, Width: 16, Trunc: true},
		{Head: []string{"PID"}, Width: 7, Right: true},
		{Head: []string{"Nodes dial"}, Width: 21, Trunc: true},
		{Head: []string{"Role"}, Width: 9},
		{Head: []string{"Epoch"}, Width: 8, Right: true},
		{Head: []string{"Candidate since"}, Width: 19},
		{Head: []string{"Leader since"}, Width: 19},
	}}
	loc := sys.loc()
	when := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.In(loc).Format("2006-01-02 15:04:05")
	}
	for _, c := range cs {
		role := cell{Text: "follower"}
		if c.Leader {
			role = cell{Text: "leader", Style: styleGreen}
		}
		t.Rows = append(t.Rows, []cell{
			{Text: c.Host}, {Text: strconv.Itoa(c.PID)}, {Text: c.Nodes}, role,
			{Text: strconv.FormatInt(c.Epoch, 10)}, {Text: when(c.Since)}, {Text: when(c.LeaderSince)},
		})
	}
	return t.render(w)
}
