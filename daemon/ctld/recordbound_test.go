package ctld

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

// hostile are the runes a string is made of in TestRecordBound: those JSON
// escapes (\u00XX, \", \\, \u003c, \u2028), multi-byte ones and a byte of
// invalid UTF-8 (\ufffd); worst only those that take 6 bytes a byte, so
// that the bound is tight on strings and a string it does not count shows.
var (
	hostile = []string{"\x00", "\x1f", "\"", "\\", "<", "&", "\u2028", "é", "\xff", "a"}
	worst   = []string{"\x01", "<", ">", "&", "\xff"}
)

// fillJob sets every field of v reachable through structs, pointers,
// slices and maps (a field added to api.Job later too): strings of size
// bytes from hostile, numbers at their longest, times at the longest that
// encode, n elements a list. It leaves the parts a new job does not have,
// which recordBound refuses, zero.
func fillJob(v reflect.Value, r *rand.Rand, runes []string, size, n int) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("", -(23*3600+59*60)))))
		return
	}
	if v.Type() == reflect.TypeFor[jobid.Range]() {
		// The longest indices that encode (only parsed ranges do).
		v.Set(reflect.ValueOf(jobid.Range{Lo: 10_000_000, Hi: jobid.MaxIndex, Step: jobid.MaxIndex}))
		return
	}
	if v.Type() == reflect.TypeFor[jobid.DepType]() {
		v.Set(reflect.ValueOf(jobid.AfterNotOK)) // the longest name; no other value encodes
		return
	}
	switch v.Kind() {
	case reflect.String:
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(runes[r.IntN(len(runes))])
		}
		v.SetString(b.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(math.MinInt64 >> (64 - v.Type().Bits()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(math.MaxUint64 >> (64 - v.Type().Bits()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(-math.MaxFloat64 / 3)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillJob(v.Elem(), r, runes, size, n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillJob(v.Index(i), r, runes, size, n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range n {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillJob(k, r, runes, size, n)
			fillJob(e, r, runes, size, n)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			switch v.Type().Field(i).Name {
			case "Allocs", "Estimated", "ArrayStates", "Acct":
				continue // recordBound refuses these: TestRecordBound/refused
			}
			fillJob(v.Field(i), r, runes, size, n)
		}
	default:
		panic("fillJob: a field of kind " + v.Kind().String() + ": count it in recordBound, fill it here")
	}
}

// TestRecordBound: recordBound is at least the length of the record for
// jobs with every field set (one added to api.Job too: strings of 400
// bytes, six times that encoded, pass recordFixed's slack unless counted),
// numbers and times at their longest, strings of the runes JSON escapes
// most, lists of every length to 8; and it refuses the jobs it does not
// count. (Leaving out any one string field, or recordFixed at half,
// fails it.)
func TestRecordBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(name string, j *api.Job) {
		t.Helper()
		rec, err := encodeRecord(j)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n, ok := recordBound(j); !ok || n < len(rec) {
			t.Errorf("%s: recordBound %d %v, the record is %d bytes", name, n, ok, len(rec))
		}
	}
	var empty api.Job
	fillJob(reflect.ValueOf(&empty).Elem(), r, nil, 0, 0)
	check("longest numbers and times, empty strings and lists", &empty)
	for _, runes := range [][]string{hostile, worst} {
		for _, size := range []int{1, 17, 400} {
			for n := range 9 {
				var j api.Job
				fillJob(reflect.ValueOf(&j).Elem(), r, runes, size, n)
				check(fmt.Sprintf("strings of %d bytes of %q, lists of %d", size, runes, n), &j)
			}
		}
	}
	for name, edit := range map[string]func(*api.Job){
		"allocations":           func(j *api.Job) { j.Allocs = []api.Alloc{{Node: "n1"}} },
		"an estimate":           func(j *api.Job) { j.Estimated = &api.Estimated{} },
		"array states":          func(j *api.Job) { j.ArrayStates = &api.ArrayStates{} },
		"accounting":            func(j *api.Job) { j.Acct.Owned = 1 },
		"a year of five digits": func(j *api.Job) { j.NotBefore = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"a negative year":       func(j *api.Job) { j.NotBefore = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
		"a zone a day off":      func(j *api.Job) { j.SubmitTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)) },
		"a history entry's zone": func(j *api.Job) {
			j.History = []api.HistoryEntry{{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", -24*3600))}}
		},
		"an end time's five-digit year": func(j *api.Job) { j.EndTime = time.Date(12026, 1, 1, 0, 0, 0, 0, time.UTC) },
	} {
		t.Run("refused/"+name, func(t *testing.T) {
			j := api.Job{ID: "1.c", SubmitTime: time.Now()}
			if _, ok := recordBound(&j); !ok {
				t.Fatal("a plain job refused")
			}
			edit(&j)
			if n, ok := recordBound(&j); ok {
				t.Errorf("recordBound %d, want refused", n)
			}
		})
	}
}
