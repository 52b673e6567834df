package runtime

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
