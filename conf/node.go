package conf

import (
	"fmt"
	"path/filepath"
)

// MaxNodeGPUs bounds a node's gpus.
const MaxNodeGPUs = 1024

// MaxNodes bounds the number of nodes in a configuration.
const MaxNodes = MaxHostlistNames

// nodeBlock is a [[node]] block while the file is checked.
type nodeBlock struct {
	t       *table
	nodes   []Node
	namesOK bool // its names expanded cleanly
	gpusOK  bool // its gpus key is usable
}

func (l *loader) nodes(ts []*table) []*nodeBlock {
	first := map[string]*nodeBlock{}
	total := 0
	var out []*nodeBlock
	for _, t := range ts {
		b := &nodeBlock{t: t, gpusOK: true}
		out = append(out, b)
		var names []string
		if s, ok := t.str("names"); ok {
			t.ctx = "node " + quote(s)
			names, b.namesOK = t.hostnames("names", s)
			if total += len(names); total > MaxNodes {
				t.errf("names", "more than %d nodes in the file", MaxNodes)
				names, b.namesOK = nil, false
			}
		} else if !t.has("names") {
			t.errAt("", "names is required (a hostlist such as \"gpu[01-16]\")")
		}
		var dups []string
		var dupOf *nodeBlock
		for _, n := range names {
			if f, ok := first[n]; ok {
				dups = append(dups, n)
				if dupOf == nil {
					dupOf = f
				}
				continue
			}
			first[n] = b
		}
		if len(dups) > 0 {
			t.errf("names", "%s already declared (by the block at line %d)", CompressHostlist(dups), dupOf.t.line("names"))
			b.namesOK = false
		}

		tmpl := Node{}
		if n, ok := t.integer("gpus"); ok {
			tmpl.GPUs = n
			if n < 0 || n > MaxNodeGPUs {
				t.errf("gpus", "%d is out of range 0..%d", n, MaxNodeGPUs)
				tmpl.GPUs, b.gpusOK = 0, false
			}
		} else if t.has("gpus") {
			b.gpusOK = false
		}
		if n, ok := t.integer("cpus"); ok {
			tmpl.CPUs = n
			if n < 0 {
				t.errf("cpus", "%d is negative", n)
			}
		}
		if n, ok := t.size("memory"); ok {
			tmpl.MemBytes = n
		}
		tmpl.GPUDevices = t.gpuDevices(tmpl.GPUs, b.gpusOK)
		tmpl.ExtraDevices = DefaultExtraDevices()
		if ds, ok := t.strings("extra_devices"); ok {
			tmpl.ExtraDevices = ds
			t.checkDevicePaths("extra_devices", ds)
		}
		tmpl.CheckpointRoot = t.absPath("checkpoint_root", l.checkpointRoot)
		tmpl.Labels = t.labels("labels")
		tmpl.NVLinkGroups = t.nvlinkGroups("nvlink", tmpl.GPUs)
		t.unknown(keys["node"]...)

		b.nodes = make([]Node, len(names))
		for i, n := range names {
			b.nodes[i] = tmpl
			b.nodes[i].Name = n
		}
	}
	return out
}

// gpuDevices reads gpu_devices (a hostlist string or an array of paths)
// and checks it has one path per GPU; absent, it is /dev/nvidia0.. .
func (t *table) gpuDevices(gpus int, gpusOK bool) []string {
	v, present := t.get("gpu_devices")
	if !present {
		devs := make([]string, gpus)
		for i := range devs {
			devs[i] = fmt.Sprintf("/dev/nvidia%d", i)
		}
		return devs
	}
	var devs []string
	switch v := v.(type) {
	case string:
		var err error
		if devs, err = ExpandHostlist(v); err != nil {
			t.errf("gpu_devices", "%v", err)
			return nil
		}
	case []any:
		var ok bool
		if devs, ok = t.strings("gpu_devices"); !ok {
			return nil
		}
	default:
		t.wrongType("gpu_devices", `a hostlist such as "/dev/nvidia[0-7]" or an array of paths`, v)
		return nil
	}
	if gpusOK && len(devs) != gpus {
		t.errf("gpu_devices", "names %d devices, but the node has %d GPUs (gpus = %d)", len(devs), gpus, gpus)
	}
	t.checkDevicePaths("gpu_devices", devs)
	seen := map[string]bool{}
	for _, d := range devs {
		if seen[d] {
			t.errf("gpu_devices", "names %q twice", d)
			break
		}
		seen[d] = true
	}
	return devs
}

func (t *table) checkDevicePaths(key string, paths []string) {
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			t.errf(key, "%q is not an absolute path", p)
			return
		}
	}
}
