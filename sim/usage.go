package sim

import "time"

// Usage is the GPUs in use per share over time: a step function that
// changes at T[i] to the values Values[i*Shares:(i+1)*Shares].
type Usage struct {
	Shares int
	T      []time.Duration
	Values []int32
}

func (u *Usage) add(t time.Duration, inUse []int) {
	if n := len(u.T); n > 0 && u.T[n-1] == t {
		u.T = u.T[:n-1]
		u.Values = u.Values[:len(u.Values)-u.Shares]
	}
	u.T = append(u.T, t)
	for _, v := range inUse {
		u.Values = append(u.Values, int32(v))
	}
}

// Downsample averages the step function over n equal buckets between from
// and to, weighting each value by the time it held. It returns the bucket
// starts and, per share, the average GPUs in use in each bucket and the
// average of the part above the share's quota (quota[s]).
func (u *Usage) Downsample(from, to time.Duration, n int, quota []int) (starts []time.Duration, inUse, over [][]float64) {
	if n <= 0 || to <= from {
		return nil, nil, nil
	}
	starts = make([]time.Duration, n)
	inUse = make([][]float64, u.Shares)
	over = make([][]float64, u.Shares)
	for s := range inUse {
		inUse[s] = make([]float64, n)
		over[s] = make([]float64, n)
	}
	span := float64(to - from)
	width := span / float64(n)
	for b := range starts {
		starts[b] = from + time.Duration(float64(b)*width)
	}
	// Walk the steps; step i holds from T[i] to T[i+1] (the last one to 'to').
	for i := range u.T {
		lo := u.T[i]
		hi := to
		if i+1 < len(u.T) {
			hi = u.T[i+1]
		}
		lo, hi = max(lo, from), min(hi, to)
		if hi <= lo {
			continue
		}
		vals := u.Values[i*u.Shares : (i+1)*u.Shares]
		b0 := int(float64(lo-from) / width)
		for b := max(b0, 0); b < n; b++ {
			bs := from + time.Duration(float64(b)*width)
			be := from + time.Duration(float64(b+1)*width)
			if b == n-1 {
				be = to
			}
			if bs >= hi {
				break
			}
			ov := float64(min(hi, be)-max(lo, bs)) / width
			if ov <= 0 {
				continue
			}
			for s, v := range vals {
				inUse[s][b] += float64(v) * ov
				if s < len(quota) && int(v) > quota[s] {
					over[s][b] += float64(int(v)-quota[s]) * ov
				}
			}
		}
	}
	return starts, inUse, over
}
