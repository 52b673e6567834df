package ctld

import (
	"reflect"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestRunSpecFilled: every field of the node's run spec is filled from the
// job (a field added to api.RunSpec and not to runSpec fails here).
func TestRunSpecFilled(t *testing.T) {
	var j job
	fill(reflect.ValueOf(&j.Job).Elem(), 1)
	spec := reflect.ValueOf(runSpec(&j))
	for _, p := range leaves(reflect.TypeFor[api.RunSpec](), "") {
		if field(spec, p).IsZero() {
			t.Errorf("RunSpec.%s is not filled from the job", p)
		}
	}
}
