package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// UsagePlotter draws the GPUs in use per share over time to w as format
// (svg or png), times shown in loc (usageplot.Write).
type UsagePlotter func(w io.Writer, format string, points []api.UsagePoint, loc *time.Location) error

// plotFormat is the image format a --plot file name asks for.
func plotFormat(path string) (string, error) {
	switch f := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."); f {
	case "svg", "png":
		return f, nil
	}
	return "", fmt.Errorf("--plot %s: want a .svg or .png file", path)
}

func saveUsagePlot(path string, points []api.UsagePoint, sys *Sys) (err error) {
	format, err := plotFormat(path)
	if err != nil {
		return err
	}
	if sys.PlotUsage == nil {
		return errors.New("--plot: this command cannot draw plots (sharqctl can)")
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("plot: %w", cerr)
		}
	}()
	return sys.PlotUsage(f, format, points, sys.Location)
}
