//go:build !cgo

package gpu

import (
	"context"
	"log/slog"
	"time"
)

// WatchHealth: NVML is a C library; a program built without cgo cannot
// watch its GPUs.
func WatchHealth(context.Context, *Health, time.Duration, *slog.Logger) error { return ErrNoNVML }
