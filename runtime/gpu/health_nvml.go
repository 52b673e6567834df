//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/sharq-hpc/sharq/api"
)

// healthEvents are the NVML events WatchHealth registers for.
const healthEvents = nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError

// eventWait bounds one wait for an NVML event (a call into C that cannot
// be interrupted): how late WatchHealth sees its context end.
const eventWait = time.Second

// healthLib is the part of NVML WatchHealth uses (nvml.Interface has it;
// tests use go-nvml's mock server).
type healthLib interface {
	lib
	EventSetCreate() (nvml.EventSet, nvml.Return)
}

// WatchHealth records in h the faults of the node's GPUs until ctx ends:
// NVML's Xid and double-bit ECC events as they come, and the periodic
// checks (checkGPU) at once and every interval. Without NVML it returns
// ErrNoNVML at once; a GPU or driver without events is still checked
// every interval.
func WatchHealth(ctx context.Context, h *Health, interval time.Duration, log *slog.Logger) error {
	return watchHealth(ctx, nvml.New(), h, interval, time.Now, log)
}

func watchHealth(ctx context.Context, l healthLib, h *Health, interval time.Duration, now func() time.Time, log *slog.Logger) (err error) {
	switch ret := l.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return ErrNoNVML
	default:
		return nvmlErr("init", ret)
	}
	defer func() {
		if ret := l.Shutdown(); ret != nvml.SUCCESS && err == nil {
			err = nvmlErr("shutdown", ret)
		}
	}()
	n, ret := l.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nvmlErr("device count", ret)
	}
	w := &healthWatch{l: l, h: h, now: now, log: log, uuids: make([]string, n)}
	set := w.register(n)
	if set != nil {
		defer set.Free()
	}
	next := now()
	lost := false // the last wait said a GPU is lost
	for {
		if !now().Before(next) {
			for i := range n {
				w.check(i)
			}
			next = now().Add(interval)
		}
		if set == nil {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(next.Sub(now())):
			}
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		wait := min(eventWait, max(0, next.Sub(now())))
		e, ret := set.Wait(uint32(wait / time.Millisecond))
		switch ret {
		case nvml.SUCCESS:
			lost = false
			w.event(e)
		case nvml.ERROR_TIMEOUT:
			lost = false
		case nvml.ERROR_GPU_IS_LOST:
			if !lost {
				lost, next = true, now() // find which at once
				break
			}
			// It keeps saying so (at once): wait as a timeout would have.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		default:
			log.Warn("NVML event wait failed: GPUs are checked every interval only", "err", nvmlErr("event wait", ret), "interval", interval)
			set.Free()
			set = nil
		}
	}
}

// healthWatch is one WatchHealth's state.
type healthWatch struct {
	l     healthLib
	h     *Health
	now   func() time.Time
	log   *slog.Logger
	uuids []string // by index, as far as known
	devs  []nvml.Device
}

// register creates the event set and registers every GPU that supports
// the health events; nil when there is none to wait on.
func (w *healthWatch) register(n int) nvml.EventSet {
	set, ret := w.l.EventSetCreate()
	if ret != nvml.SUCCESS {
		w.log.Warn("no NVML events: GPUs are checked every interval only", "err", nvmlErr("event set", ret))
		return nil
	}
	w.devs = make([]nvml.Device, n)
	registered := 0
	for i := range n {
		d, ret := w.l.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue // the periodic check says why
		}
		w.devs[i] = d
		if u, ret := d.GetUUID(); ret == nvml.SUCCESS {
			w.uuids[i] = u
		}
		types, ret := d.GetSupportedEventTypes()
		if ret != nvml.SUCCESS || types&healthEvents == 0 {
			continue
		}
		if ret := d.RegisterEvents(types&healthEvents, set); ret != nvml.SUCCESS {
			w.log.Warn("cannot register for NVML events", "gpu", i, "err", nvmlErr("register events", ret))
			continue
		}
		registered++
	}
	if registered == 0 {
		set.Free()
		return nil
	}
	return set
}

// index finds which GPU an event is of (-1: none of the node's).
func (w *healthWatch) index(d nvml.Device) int {
	if d == nil {
		return -1
	}
	if i, ret := d.GetIndex(); ret == nvml.SUCCESS && i >= 0 && i < len(w.uuids) {
		return i
	}
	for i, x := range w.devs {
		if x != nil && x == d {
			return i
		}
	}
	return -1
}

// event records what an NVML event says.
func (w *healthWatch) event(e nvml.EventData) {
	i := w.index(e.Device)
	if i < 0 {
		w.log.Warn("NVML event of an unknown GPU", "type", e.EventType, "data", e.EventData)
		return
	}
	t := w.now()
	switch {
	case e.EventType&nvml.EventTypeXidCriticalError != 0:
		if f, ok := XidFault(i, w.uuids[i], e.EventData, t); ok {
			w.add(f)
		} else {
			w.log.Info("GPU Xid of a job's own making: the GPU stays in use", "gpu", i, "xid", e.EventData)
		}
	case e.EventType&nvml.EventTypeDoubleBitEccError != 0:
		w.add(api.GPUFault{Index: i, UUID: w.uuids[i], Kind: api.GPUFaultECC, Fatal: true, Time: t,
			Reason: "double-bit ECC error"})
	}
}

// check looks at GPU i: does NVML still reach it, has it uncorrectable ECC
// errors since the last reset, did its row remapper fail.
func (w *healthWatch) check(i int) {
	t := w.now()
	lost := func(what string) {
		w.add(api.GPUFault{Index: i, UUID: w.uuids[i], Kind: api.GPUFaultLost, Fatal: true, Time: t,
			Reason: "GPU lost: NVML cannot reach it (" + what + ")"})
	}
	d, ret := w.l.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		lost(nvmlErr("handle", ret).Error())
		return
	}
	u, ret := d.GetUUID()
	if ret != nvml.SUCCESS {
		lost(nvmlErr("uuid", ret).Error())
		return
	}
	w.uuids[i] = u
	if n, ret := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC); ret == nvml.SUCCESS && n > 0 {
		w.add(api.GPUFault{Index: i, UUID: u, Kind: api.GPUFaultECC, Fatal: true, Time: t,
			Reason: fmt.Sprintf("%d uncorrectable ECC errors since the last reset", n)})
	} else if ret == nvml.ERROR_GPU_IS_LOST {
		lost(nvmlErr("ECC errors", ret).Error())
		return
	}
	if _, _, _, failed, ret := d.GetRemappedRows(); ret == nvml.SUCCESS && failed {
		w.add(api.GPUFault{Index: i, UUID: u, Kind: api.GPUFaultRowRemap, Time: t,
			Reason: "row remapping failed: memory rows with uncorrectable errors could not be replaced"})
	}
}

func (w *healthWatch) add(f api.GPUFault) {
	if w.h.Add(f) {
		w.log.Error("GPU unhealthy: no new job gets it until an admin clears it", "gpu", f.Index, "uuid", f.UUID, "why", f.Reason, "fatal", f.Fatal)
	}
}
