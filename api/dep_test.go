package api

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/sharq-hpc/sharq/jobid"
)

// TestDepWire: a dependency's type is typed on the wire with the bytes it
// had as a string; a message with an unknown type, or none, fails to
// decode (a missing type must not become afterok, the zero DepType).
func TestDepWire(t *testing.T) {
	b, err := json.Marshal([]Dep{{Type: jobid.AfterAny, On: "3[].lab"}})
	if err != nil || string(b) != `[{"type":"afterany","on":"3[].lab"}]` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var back []Dep
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 1 || back[0] != (Dep{Type: jobid.AfterAny, On: "3[].lab"}) {
		t.Fatalf("Unmarshal = %+v, %v", back, err)
	}
	for _, in := range []string{`{"type":"before","on":"1"}`, `{"on":"1"}`, `{"type":null,"on":"1"}`, `{"type":3,"on":"1"}`} {
		var d Dep
		err := json.Unmarshal([]byte(in), &d)
		if err == nil {
			t.Errorf("%s decoded as %+v", in, d)
		}
		if in != `{"type":3,"on":"1"}` && !errors.Is(err, jobid.ErrBadDepend) {
			t.Errorf("%s: %v, want ErrBadDepend", in, err)
		}
	}
	if _, err := json.Marshal(Dep{Type: 9, On: "1"}); err == nil {
		t.Error("a dependency type outside the types was written")
	}
}
