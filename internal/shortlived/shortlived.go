package shortlived

import "runtime"

// frame is the size of presize's frame: with the few frames under it, the
// runtime grows the stack from its 2 KiB start to 16 KiB in one step
// (growth doubles until the frame fits below the guard).
const frame = 12 << 10

func init() {
	presize(0)
	runtime.GOMAXPROCS(1)
}

// presize needs a frame of frame bytes, which makes the runtime grow the
// stack before the frame is entered.
//
//go:noinline
func presize(i int) byte {
	var buf [frame]byte
	buf[i] = 1
	return buf[(i+1)%len(buf)]
}
