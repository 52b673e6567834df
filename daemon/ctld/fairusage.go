package ctld

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/spool"
)

// The core's decayed usage for fair share (sched.Usage) lives in the
// spool's state under usageKey, written every usageSaveEvery, before a
// rebuild and when the controller stops; restore gives it back to the new
// core before its first pass, after the running jobs are adopted (they
// count from the saved time on: they ran on while the controller was
// down). It is soft state: a crash loses at most the
// usage since the last save, and a record that does not decode is logged
// and ignored (fair share starts from no usage), never a reason not to
// start.

const (
	usageKey       = "fair-usage"
	usageSaveEvery = time.Minute
	// usageVersion is the format of the record; a newer one is ignored.
	usageVersion = 1
	// maxUsageShares bounds the shares a record may name.
	maxUsageShares = 1 << 14
)

// usageRecord is the stored form of sched.UsageState.
type usageRecord struct {
	V      int          `json:"v"`
	At     time.Time    `json:"at"`
	Shares []usageShare `json:"shares"`
}

type usageShare struct {
	Share    string      `json:"share"`
	Borrowed float64     `json:"borrowed_gpu_s"`
	Users    []usageUser `json:"users,omitempty"`
}

type usageUser struct {
	User       string  `json:"user"`
	GPUSeconds float64 `json:"gpu_s"`
}

// errUsageTooLarge: even without per-user entries the usage does not fit a
// spool value.
var errUsageTooLarge = errors.New("fair share usage too large for the spool")

// encodeUsage writes st; when it is above spool.MaxRecordSize the per-user
// entries (the smaller part, and the first to be rebuilt) are left out.
func encodeUsage(st sched.UsageState) ([]byte, error) {
	rec := usageRecord{V: usageVersion, At: st.At.UTC(), Shares: make([]usageShare, len(st.Shares))}
	for i, s := range st.Shares {
		us := usageShare{Share: s.Share, Borrowed: s.Borrowed}
		for _, u := range s.Users {
			us.Users = append(us.Users, usageUser{User: u.User, GPUSeconds: u.GPUSeconds})
		}
		rec.Shares[i] = us
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	if len(b) <= spool.MaxRecordSize {
		return b, nil
	}
	for i := range rec.Shares {
		rec.Shares[i].Users = nil
	}
	if b, err = json.Marshal(rec); err != nil {
		return nil, err
	}
	if len(b) > spool.MaxRecordSize {
		return nil, fmt.Errorf("%w: %d bytes", errUsageTooLarge, len(b))
	}
	return b, nil
}

// decodeUsage reads a stored record. It checks the form (version, sizes,
// names, finite non-negative numbers); the core checks the rest again.
func decodeUsage(b []byte) (sched.UsageState, error) {
	var st sched.UsageState
	if len(b) > spool.MaxRecordSize {
		return st, fmt.Errorf("usage record of %d bytes: %w", len(b), spool.ErrTooLarge)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rec usageRecord
	if err := dec.Decode(&rec); err != nil {
		return st, fmt.Errorf("usage record: %w", err)
	}
	if dec.More() {
		return st, errors.New("usage record: data after the record")
	}
	if rec.V != usageVersion {
		return st, fmt.Errorf("usage record: version %d (this controller reads %d)", rec.V, usageVersion)
	}
	if len(rec.Shares) > maxUsageShares {
		return st, fmt.Errorf("usage record: %d shares (at most %d)", len(rec.Shares), maxUsageShares)
	}
	st.At = rec.At
	seen := map[string]bool{}
	for _, s := range rec.Shares {
		if s.Share == "" || len(s.Share) > 255 || seen[s.Share] || !usageOK(s.Borrowed) {
			return sched.UsageState{}, fmt.Errorf("usage record: share %q: bad name or usage", s.Share)
		}
		seen[s.Share] = true
		su := sched.ShareUse{Share: s.Share, Borrowed: s.Borrowed}
		users := map[string]bool{}
		for _, u := range s.Users {
			if u.User == "" || len(u.User) > 255 || users[u.User] || !usageOK(u.GPUSeconds) {
				return sched.UsageState{}, fmt.Errorf("usage record: share %q: user %q: bad name or usage", s.Share, u.User)
			}
			users[u.User] = true
			su.Users = append(su.Users, sched.UserUse{User: u.User, GPUSeconds: u.GPUSeconds})
		}
		st.Shares = append(st.Shares, su)
	}
	return st, nil
}

func usageOK(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 && v <= math.MaxFloat64/4
}

// saveUsage writes the core's usage to the spool (synced).
func (c *Controller) saveUsage() error {
	b, err := encodeUsage(c.core.Usage())
	if err != nil {
		return err
	}
	c.lastUsageSave = c.now()
	return c.sp.SetState(bgctx, usageKey, b)
}

// restoreUsage gives the core the usage the spool holds.
func (c *Controller) restoreUsage(ctx context.Context) error {
	b, err := c.sp.State(ctx, usageKey)
	if err != nil || b == nil {
		return err
	}
	st, err := decodeUsage(b)
	if err == nil {
		err = c.core.Apply(sched.UsageRestored{State: st})
	}
	if err != nil {
		c.log.Error("fair share usage in the spool ignored: fair share starts from none", "err", err)
	}
	return nil
}
