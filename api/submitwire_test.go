package api

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
	"time"
)

// filler sets values from a fuzz input: text for strings, bytes for the
// rest.
type filler struct {
	t    *testing.T
	data []byte
	text string
	n    int
}

func (f *filler) byte() byte {
	if len(f.data) == 0 {
		return 0
	}
	c := f.data[f.n%len(f.data)]
	f.n++
	return c
}

func (f *filler) u32() uint32 {
	return binary.LittleEndian.Uint32([]byte{f.byte(), f.byte(), f.byte(), f.byte()})
}

func (f *filler) str() string {
	if f.text == "" {
		return ""
	}
	i := int(f.byte()) % len(f.text)
	return f.text[i:min(len(f.text), i+int(f.byte())%24)]
}

// fill sets every field under v, leaving about one in four at its zero
// value so that omitempty is exercised both ways. A kind it does not know
// fails the test: appendSubmit has to learn it too.
func (f *filler) fill(v reflect.Value) {
	if v.Kind() != reflect.Struct && f.byte()%4 == 0 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(f.str())
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(int32(f.u32())))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Uint8: // an enum with text marshalling (jobid.DepType): now and then out of its range
		v.SetUint(uint64(f.byte() % 5))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		n := int(f.byte() % 4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			f.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range f.byte() % 5 {
			e := reflect.New(v.Type().Elem()).Elem()
			f.fill(e)
			m.SetMapIndex(reflect.ValueOf(f.str()).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			// Zero, one in four times (omitzero); else years 1..9999, and
			// one in sixteen out of JSON's range; in UTC or an odd fixed
			// zone, with and without nanoseconds.
			if f.byte()%4 == 0 {
				return
			}
			sec := int64(f.u32())*73 - 62_000_000_000
			if f.byte()%16 == 0 {
				sec = 260_000_000_000 + int64(f.u32())
			}
			t := time.Unix(sec, int64(f.u32()%3)*123_456_789).UTC()
			if f.byte()%2 == 0 {
				t = t.In(time.FixedZone("x", int(int16(f.u32()))*60))
			}
			v.Set(reflect.ValueOf(t))
			return
		}
		for i := range v.NumField() {
			f.fill(v.Field(i))
		}
	default:
		f.t.Fatalf("%s is a %s: teach appendSubmit (and this filler) that kind", v.Type(), v.Kind())
	}
}

// FuzzSubmitWire: EncodeRequest writes a submission, every field of it
// set or not, without reflection and byte for byte as Encode does; a
// submission Encode refuses it refuses too.
func FuzzSubmitWire(f *testing.F) {
	f.Add(bytes.Repeat([]byte{1}, 8), "every field set")
	f.Add(bytes.Repeat([]byte{2, 5}, 8), "\b\f\x01\x1f\n\r\t\"\\<>&")
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, "train.sh")
	f.Add([]byte{255, 1, 254, 2, 253, 3, 7, 7, 7, 7, 7}, "a<b>&c\"d\\e\u2028f\u2029g\x00\x1f\x7f\xff\xfeé漢字\b\f\n\r\t")
	f.Add([]byte("\x05\x06\x07\x01\x02\x03\x04"), "#!/bin/sh\necho $HOME\n")
	f.Add(bytes.Repeat([]byte{3}, 40), "PBS_O_HOME=/home/u")
	f.Add(bytes.Repeat([]byte{4, 0, 9}, 30), "0f1e2d3c4b5a69788796a5b4c3d2e1f0") // a request id
	f.Add(bytes.Repeat([]byte{1, 1, 9}, 40), "rack")                             // place=group=rack@TIME
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		fl := &filler{t: t, data: data, text: text}
		var spec SubmitSpec
		fl.fill(reflect.ValueOf(&spec).Elem())
		req := Request{V: Version, Op: OpSubmit, Submit: &spec}
		var got, want bytes.Buffer
		errGot, errWant := EncodeRequest(&got, &req), Encode(&want, req)
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("EncodeRequest: %v; Encode: %v", errGot, errWant)
		}
		if got.String() != want.String() {
			t.Fatalf("EncodeRequest:\n%s\nEncode:\n%s", got.String(), want.String())
		}
		if _, ok := appendSubmit(nil, &req); ok != (errWant == nil) {
			t.Fatalf("appendSubmit ok = %v; Encode error %v (it must write every submission Encode can)", ok, errWant)
		}
	})
}

// TestAppendSubmitOthers: any request but a plain submission is left to
// encoding/json.
func TestAppendSubmitOthers(t *testing.T) {
	spec := &SubmitSpec{Job: JobSpec{Share: "vision"}}
	for _, req := range []Request{
		{V: Version, Op: OpStat, Submit: spec},
		{V: Version, Op: OpSubmit},
		{V: Version, Op: OpSubmit, Submit: spec, IDs: []string{"1.lab"}},
		{V: Version, Op: OpSubmit, Submit: spec, Stat: &StatFilter{}},
		{V: Version, Op: OpSubmit, Submit: spec, Alter: &AlterSpec{}},
		{V: Version, Op: OpSubmit, Submit: spec, Node: "n1"},
		{V: Version, Op: OpSubmit, Submit: spec, Report: &ReportSpec{}},
		{V: Version, Op: OpSubmit, Submit: spec, Force: true},
		{V: Version, Op: OpSubmit, Submit: spec, Session: &SessionSpec{}},
	} {
		if _, ok := appendSubmit(nil, &req); ok {
			t.Errorf("appendSubmit took %+v", req)
		}
	}
}
