package containerd

import (
	"context"
	"slices"
	"strings"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// NVIDIA driver libraries.
//
// sharq itself gives a job its GPUs: the device nodes and device cgroup
// rules of Spec.Devices. The user-space driver (libcuda, libnvidia-ml,
// nvidia-smi) must match the host's kernel module, so it comes from the
// host: where the NVIDIA container toolkit is installed
// (nvidia-container-cli and nvidia-container-runtime-hook in PATH), every
// job gets the toolkit's OCI prestart hook, as containerd 1.x's
// contrib/nvidia did, and the hook mounts the libraries in. Unless the
// job's environment already says otherwise, NVIDIA_VISIBLE_DEVICES=none
// tells the hook to add libraries only, leaving devices to sharq.
const (
	nvidiaCLI     = "nvidia-container-cli"
	nvidiaHookBin = "nvidia-container-runtime-hook"
)

// nvidiaDeviceRequests are the variables by which a container's
// environment asks the NVIDIA toolkit (its hook, or nvidia-container-runtime
// where a site made it containerd's runtime) for more than the job's GPUs:
// MIG configuration and monitoring of every GPU instance (other jobs'
// processes and memory included), IMEX channels, the NVSwitch fabric,
// GPUDirect Storage, RDMA and GDRCopy devices of the whole node, and the
// device nodes' groups as supplementary groups. A job gets exactly its
// GPUs: withoutNvidiaDeviceRequests drops these from its environment,
// whether the job or its image set them. A site that wants GDS, MOFED or
// GDRCopy devices in every job turns the feature on in the toolkit's own
// config.toml, which the toolkit reads before the environment.
var nvidiaDeviceRequests = []string{
	"NVIDIA_MIG_CONFIG_DEVICES", "NVIDIA_MIG_MONITOR_DEVICES", "NVIDIA_IMEX_CHANNELS", "NVIDIA_NVSWITCH",
	"NVIDIA_GDS", "NVIDIA_MOFED", "NVIDIA_GDRCOPY", "NVIDIA_ALLOW_ADDITIONAL_GIDS",
}

// withoutNvidiaDeviceRequests removes nvidiaDeviceRequests from the
// process's environment (after the image's and the job's are merged).
func withoutNvidiaDeviceRequests(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
	if s.Process == nil {
		return nil
	}
	s.Process.Env = slices.DeleteFunc(s.Process.Env, func(e string) bool {
		name, _, _ := strings.Cut(e, "=")
		return slices.Contains(nvidiaDeviceRequests, name)
	})
	return nil
}

// nvidiaHook returns the hook option when the toolkit is on the host.
func nvidiaHook(h host) (oci.SpecOpts, bool) {
	if h.lookPath == nil {
		return nil, false
	}
	if _, err := h.lookPath(nvidiaCLI); err != nil {
		return nil, false
	}
	hookPath, err := h.lookPath(nvidiaHookBin)
	if err != nil {
		return nil, false
	}
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Hooks == nil {
			s.Hooks = &specs.Hooks{}
		}
		hook := specs.Hook{Path: hookPath, Args: []string{nvidiaHookBin, "prestart"}}
		if h.path != "" {
			hook.Env = []string{"PATH=" + h.path}
		}
		//lint:ignore SA1019 Prestart is deprecated in the OCI spec, but the toolkit's hook is a prestart hook and runc runs it.
		s.Hooks.Prestart = append(s.Hooks.Prestart, hook)
		if !slices.ContainsFunc(s.Process.Env, func(e string) bool { return strings.HasPrefix(e, "NVIDIA_VISIBLE_DEVICES=") }) {
			s.Process.Env = append(s.Process.Env, "NVIDIA_VISIBLE_DEVICES=none")
		}
		return nil
	}, true
}
