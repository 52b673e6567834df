package ctld

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/api"
)

// notInHistory lists the fields of a finished job (api.Job) its history
// record does not keep, and why: TestHistoryMapping fails on any other
// field the mapping (historyFields) leaves out, so a field added to api.Job
// is either mapped or listed here.
var notInHistory = map[string]string{
	// Queue and pending state, meaningless once the job ended.
	"QueuePlace": "queue order", "Hold": "pending state", "Estimated": "pending state, never stored",
	"Owner.Groups": "the submitter's groups, for the controller's rights checks while the job lives",
	// Running state and the controller's retry bookkeeping.
	"State": "always finished", "Stopping": "running state", "RequeueAt": "running state",
	"ArrayStates": "never stored", "StartFailures": "retry counter (qstat -f does not show it)",
	"CheckpointNode":   "restart placement",
	"RerunWhy":         "running state: why the run now ending is requeued (its history entry says it)",
	"GPUUse":           "the running job's sampling; the finished run's summary is GPURun",
	"Acct.RunBorrowed": "running state", "Acct.StopSent": "running state", "Acct.Recorded": "set by apiJob itself",
}

// fill sets v to a non-zero value that differs for each n.
func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n + 2))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n + 2))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 2.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), n)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), n)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(int64(1e9+n), 0).UTC()))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n+i)
			}
		}
	default:
		panic("fill: " + v.Kind().String())
	}
}

// leaves lists the field paths of struct type t ("Owner.UID"), going into
// the nested structs of package api (time.Time is a leaf).
func leaves(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		p := prefix + f.Name
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == reflect.TypeFor[api.Job]().PkgPath() {
			out = append(out, leaves(f.Type, p+".")...)
			continue
		}
		out = append(out, p)
	}
	return out
}

func field(v reflect.Value, path string) reflect.Value {
	for _, name := range strings.Split(path, ".") {
		v = v.FieldByName(name)
	}
	return v
}

// TestHistoryMapping: the history record of a finished job and the job
// qstat -x shows from it map every field of acct.Record both ways (a
// record survives the round trip through api.Job whole), and every field
// of api.Job reaches the record unless notInHistory says why not: a field
// added to either side and not to historyFields fails here.
func TestHistoryMapping(t *testing.T) {
	t.Run("record round trip", func(t *testing.T) {
		for n := range 3 {
			var r acct.Record
			fill(reflect.ValueOf(&r).Elem(), n)
			r.ArrayIndices = fmt.Sprintf("0-%d:%d", 10+n, n+2)                       // only indices the wire reads are written
			r.Detail.Deps[0].Type = []string{"afterok", "afternotok", "afterany"}[n] // and dependency types
			j := apiJob(r)
			if got := historyRecord(&j); !reflect.DeepEqual(got, r) {
				t.Errorf("record -> job -> record:\n got %+v\nwant %+v", got, r)
			}
		}
	})
	t.Run("every job field mapped or listed", func(t *testing.T) {
		var zero api.Job
		base := historyRecord(&zero)
		paths := leaves(reflect.TypeFor[api.Job](), "")
		for _, p := range paths {
			var j api.Job
			fill(field(reflect.ValueOf(&j).Elem(), p), 1)
			mapped := !reflect.DeepEqual(historyRecord(&j), base)
			why, listed := notInHistory[p]
			switch {
			case !mapped && !listed:
				t.Errorf("api.Job.%s reaches no history field: map it in historyFields or say why not in notInHistory", p)
			case mapped && listed:
				t.Errorf("api.Job.%s is mapped, yet notInHistory says %q", p, why)
			}
		}
		for p := range notInHistory {
			if !slices.Contains(paths, p) {
				t.Errorf("notInHistory names %s, which api.Job lacks", p)
			}
		}
	})
}
