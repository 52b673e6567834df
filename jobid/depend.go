package jobid

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadDepend is wrapped by every dependency parsing error.
var ErrBadDepend = errors.New("bad dependency")

// DepType is a PBS dependency type (-W depend=TYPE:ID).
type DepType uint8

const (
	AfterOK    DepType = iota // start after the job(s) finished with exit status 0
	AfterNotOK                // ... finished with a non-zero status (or failed)
	AfterAny                  // ... finished in any way
	After                     // ... started
)

var depNames = [...]string{AfterOK: "afterok", AfterNotOK: "afternotok", AfterAny: "afterany", After: "after"}

func (d DepType) String() string {
	if int(d) < len(depNames) {
		return depNames[d]
	}
	return fmt.Sprintf("DepType(%d)", d)
}

// Check says whether d is one of the types.
func (d DepType) Check() error {
	if int(d) < len(depNames) {
		return nil
	}
	return fmt.Errorf("%w: dependency type %d", ErrBadDepend, d)
}

// MarshalText writes the type's PBS name; a value outside the types is an
// error, never written.
func (d DepType) MarshalText() ([]byte, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	return []byte(depNames[d]), nil
}

// UnmarshalText reads a PBS name (ParseDepType): a message carrying any
// other fails to decode.
func (d *DepType) UnmarshalText(b []byte) error {
	t, err := ParseDepType(string(b))
	if err != nil {
		return err
	}
	*d = t
	return nil
}

// ParseDepType parses afterok, afternotok, afterany or after (lower case).
func ParseDepType(s string) (DepType, error) {
	for i, n := range depNames {
		if n == s {
			return DepType(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %s", ErrBadDepend, depTypeProblem(s))
}

func depTypeProblem(s string) string {
	if strings.HasPrefix(s, "before") || s == "on" || s == "runone" {
		return fmt.Sprintf("type %.40s is not supported (use after, afterok, afternotok or afterany)", s)
	}
	return fmt.Sprintf("unknown type %.40q (want after, afterok, afternotok or afterany)", s)
}

// CheckDepOn checks the job a dependency names: one job, one array or one
// subjob (not a selection).
func CheckDepOn(s string) error {
	r, err := ParseRef(s)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadDepend, err)
	}
	if _, ok := r.Single(); !ok {
		return fmt.Errorf("%w: %.40q names more than one subjob", ErrBadDepend, s)
	}
	return nil
}

// Dep is one parsed dependency entry.
type Dep struct {
	Type DepType
	On   string // as typed; a Single Ref
}

// ParseDepend parses a -W depend= value: type:id[:id...] entries separated
// by commas. Types are case-insensitive. Repeated pairs are dropped.
func ParseDepend(s string) ([]Dep, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: empty; want e.g. afterok:123", ErrBadDepend)
	}
	var deps []Dep
	seen := map[Dep]bool{}
	for _, entry := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(entry), ":")
		typ := strings.ToLower(parts[0])
		t, err := ParseDepType(typ)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %s", ErrBadDepend, entry, depTypeProblem(typ))
		}
		if len(parts) < 2 {
			return nil, fmt.Errorf("%w %q: %s names no job (want %s:ID[:ID...])", ErrBadDepend, entry, typ, typ)
		}
		for _, id := range parts[1:] {
			if CheckDepOn(id) != nil {
				return nil, fmt.Errorf("%w %q: %q is not a job id", ErrBadDepend, entry, id)
			}
			d := Dep{Type: t, On: id}
			if !seen[d] {
				seen[d] = true
				deps = append(deps, d)
			}
		}
	}
	return deps, nil
}

// FormatDepend writes deps in PBS form, consecutive entries of one type
// grouped: afterok:1.lab:2.lab,afterany:3.lab.
func FormatDepend(deps []Dep) string {
	var b strings.Builder
	for i, d := range deps {
		switch {
		case i > 0 && deps[i-1].Type == d.Type:
			b.WriteString(":")
		case i > 0:
			b.WriteString("," + d.Type.String() + ":")
		default:
			b.WriteString(d.Type.String() + ":")
		}
		b.WriteString(d.On)
	}
	return b.String()
}
