package sim

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotBuckets is how many time buckets the usage series is averaged into.
const PlotBuckets = 2000

// ErrNoUsage means the result was computed without Options.Usage.
var ErrNoUsage = errors.New("result has no usage series (run with Options.Usage)")

// palette is Tableau's ten categorical colours.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

func lighter(c color.RGBA, f float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(float64(v) + (255-float64(v))*f) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

func darker(c color.RGBA, f float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(float64(v) * (1 - f)) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

// SavePlot draws the result's usage to path; the format follows the
// extension (.svg, .png, .pdf, ...).
func SavePlot(path string, r *Result, title string) (err error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("plot: %w", cerr)
		}
	}()
	return WritePlot(f, format, r, title)
}

// WritePlot draws GPUs in use per share over time, stacked, in format
// ("svg", "png", ...): each share's band is solid up to its quota and
// lighter above it (borrowed GPUs); a dashed line in the share's colour
// marks where its quota ends within the stack; a black line is the
// cluster's capacity. The series is averaged into PlotBuckets buckets.
func WritePlot(w io.Writer, format string, r *Result, title string) error {
	if r.Usage == nil {
		return ErrNoUsage
	}
	quota := make([]int, len(r.Shares))
	for i, s := range r.Shares {
		quota[i] = s.Quota
	}
	from, to := r.Start, max(r.End, r.Start+time.Second)
	starts, inUse, over := r.Usage.Downsample(from, to, PlotBuckets, quota)

	unit, unitName := time.Hour, "hours"
	if to-from > 96*time.Hour {
		unit, unitName = 24*time.Hour, "days"
	}
	xs := make([]float64, len(starts)+1)
	for b, s := range starts {
		xs[b] = float64(s) / float64(unit)
	}
	xs[len(starts)] = float64(to) / float64(unit)

	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time (" + unitName + ")"
	p.Y.Label.Text = "GPUs in use"
	// The legend sits top right, in room kept free beyond the last exit.
	p.Legend.Top = true
	p.X.Min = xs[0]
	p.X.Max = xs[len(xs)-1] + 0.25*(xs[len(xs)-1]-xs[0])

	// step turns per-bucket values into a staircase outline.
	step := func(y func(b int) float64) plotter.XYs {
		pts := make(plotter.XYs, 0, 2*len(starts))
		for b := range starts {
			pts = append(pts, plotter.XY{X: xs[b], Y: y(b)}, plotter.XY{X: xs[b+1], Y: y(b)})
		}
		return pts
	}
	band := func(lo, hi func(b int) float64, c color.Color) (*plotter.Polygon, error) {
		top := step(hi)
		bottom := step(lo)
		ring := make(plotter.XYs, 0, len(top)+len(bottom))
		ring = append(ring, top...)
		for i := len(bottom) - 1; i >= 0; i-- {
			ring = append(ring, bottom[i])
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, err
		}
		poly.Color = c
		poly.LineStyle.Width = 0
		return poly, nil
	}

	base := make([]float64, len(starts))
	for s := range r.Shares {
		c := palette[s%len(palette)]
		b0 := append([]float64(nil), base...)
		own := func(b int) float64 { return b0[b] + inUse[s][b] - over[s][b] }
		all := func(b int) float64 { return b0[b] + inUse[s][b] }
		ownBand, err := band(func(b int) float64 { return b0[b] }, own, c)
		if err != nil {
			return fmt.Errorf("plot: share %s: %w", r.Shares[s].Name, err)
		}
		borrowBand, err := band(own, all, lighter(c, 0.6))
		if err != nil {
			return fmt.Errorf("plot: share %s: %w", r.Shares[s].Name, err)
		}
		q := float64(quota[s])
		quotaLine, err := plotter.NewLine(step(func(b int) float64 { return b0[b] + q }))
		if err != nil {
			return fmt.Errorf("plot: share %s: %w", r.Shares[s].Name, err)
		}
		quotaLine.LineStyle = draw.LineStyle{Color: darker(c, 0.3), Width: vg.Points(0.6), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
		p.Add(ownBand, borrowBand, quotaLine)
		p.Legend.Add(fmt.Sprintf("%s (quota %d)", r.Shares[s].Name, quota[s]), ownBand)
		for b := range base {
			base[b] += inUse[s][b]
		}
	}
	capLine, err := plotter.NewLine(plotter.XYs{{X: xs[0], Y: float64(r.TotalGPUs)}, {X: xs[len(xs)-1], Y: float64(r.TotalGPUs)}})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	capLine.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	p.Add(capLine)
	p.Legend.Add(fmt.Sprintf("capacity %d GPUs", r.TotalGPUs), capLine)
	p.Y.Min = 0
	p.Y.Max = float64(r.TotalGPUs) * 1.05
	p.Add(plotter.NewGrid())

	wt, err := p.WriterTo(30*vg.Centimeter, 15*vg.Centimeter, format)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}
