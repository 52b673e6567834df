package usageplot

import (
	"fmt"
	"image/color"
	"io"
	"sort"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/sharq-hpc/sharq/api"
)

// lighten mixes c with white.
func lighten(c color.Color, f float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { x := float64(v >> 8); return uint8(x + (255-x)*f) }
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}

// Write draws GPUs in use per share over time, stacked as the
// simulator draws them (gonum/plot): each share's band solid for the GPUs
// within its quota, lighter for the borrowed ones.
func Write(w io.Writer, format string, points []api.UsagePoint, loc *time.Location) error {
	if loc == nil {
		loc = time.Local
	}
	var times []time.Time
	seen := map[time.Time]int{}
	shareSet := map[string]bool{}
	for _, p := range points {
		if _, ok := seen[p.Time]; !ok {
			seen[p.Time] = 0
			times = append(times, p.Time)
		}
		shareSet[p.Share] = true
	}
	sort.Slice(times, func(i, k int) bool { return times[i].Before(times[k]) })
	for i, t := range times {
		seen[t] = i
	}
	var shares []string
	for s := range shareSet {
		shares = append(shares, s)
	}
	sort.Strings(shares)
	idx := map[string]int{}
	for i, s := range shares {
		idx[s] = i
	}
	owned := make([][]float64, len(shares))
	borrowed := make([][]float64, len(shares))
	for i := range shares {
		owned[i], borrowed[i] = make([]float64, len(times)), make([]float64, len(times))
	}
	for _, p := range points {
		owned[idx[p.Share]][seen[p.Time]] = p.Owned
		borrowed[idx[p.Share]][seen[p.Time]] = p.Borrowed
	}

	p := plot.New()
	p.Title.Text = "GPUs in use per share (lighter: borrowed)"
	p.Y.Label.Text = "GPUs in use"
	p.X.Tick.Marker = plot.TimeTicks{Format: "01-02 15:04", Time: func(t float64) time.Time { return time.Unix(int64(t), 0).In(loc) }}
	p.Legend.Top = true
	p.Y.Min = 0
	if len(times) == 0 {
		p.Title.Text += ": no samples in the period"
	}
	xs := func(i int) float64 { return float64(times[i].Unix()) }
	base := make([]float64, len(times))
	band := func(lo, hi []float64, c color.Color) (*plotter.Polygon, error) {
		ring := make(plotter.XYs, 0, 2*len(times))
		for i := range times {
			ring = append(ring, plotter.XY{X: xs(i), Y: hi[i]})
		}
		for i := len(times) - 1; i >= 0; i-- {
			ring = append(ring, plotter.XY{X: xs(i), Y: lo[i]})
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, err
		}
		poly.Color = c
		poly.LineStyle.Width = 0
		return poly, nil
	}
	for s, name := range shares {
		if len(times) < 2 {
			break
		}
		lo := append([]float64(nil), base...)
		mid := make([]float64, len(times))
		hi := make([]float64, len(times))
		for i := range times {
			mid[i] = lo[i] + owned[s][i]
			hi[i] = mid[i] + borrowed[s][i]
		}
		c := plotutil.Color(s)
		own, err := band(lo, mid, c)
		if err != nil {
			return fmt.Errorf("plot: share %s: %w", name, err)
		}
		bor, err := band(mid, hi, lighten(c, 0.6))
		if err != nil {
			return fmt.Errorf("plot: share %s: %w", name, err)
		}
		p.Add(own, bor)
		p.Legend.Add(name, own)
		p.Legend.Add(name+" borrowed", bor)
		base = hi
	}
	p.Add(plotter.NewGrid())
	wt, err := p.WriterTo(30*vg.Centimeter, 15*vg.Centimeter, format)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}
