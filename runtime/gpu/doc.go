// Package gpu finds a node's GPUs: Discover asks NVML (NVIDIA's management
// library, through go-nvml, loaded at run time; ErrNoNVML where it is not
// installed), FromConfig turns the configuration's declared device nodes
// into GPUs, Compare lists disagreements between the two, and Detect
// combines them the way the node daemon reports its inventory.
package gpu
