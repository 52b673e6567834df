package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/jobid"
)

func TestDecoder(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		limit int
		want  error // nil: decodes
		op    Op
	}{
		{"one request", `{"v":1,"op":"stat"}` + "\n", MaxMessage, nil, OpStat},
		{"eof", "", MaxMessage, io.EOF, ""},
		{"truncated", `{"v":1,"op":"stat"}`, MaxMessage, io.ErrUnexpectedEOF, ""},
		{"too large", `{"v":1,"op":"` + strings.Repeat("x", 100) + `"}` + "\n", 64, ErrTooLarge, ""},
		{"line longer than the buffer", `{"v":1,"op":"stat","ids":["` + strings.Repeat("1", 200000) + `"]}` + "\n", MaxMessage, nil, OpStat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var req Request
			err := NewDecoderLimit(strings.NewReader(c.in), c.limit).Decode(&req)
			if c.want == nil {
				if err != nil || req.Op != c.op {
					t.Fatalf("err %v op %q", err, req.Op)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
	var req Request
	if err := NewDecoder(strings.NewReader("{nope}\n")).Decode(&req); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("malformed: %v", err)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := NodeMsg{V: NodeVersion, Type: MsgStart, Start: &StartOrder{Job: RunSpec{ID: "1.t", Env: map[string]string{"A": "line\nbreak"}}, GPUs: []int{2, 3}}}
	if err := Encode(&buf, in); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("not one line: %q", buf.String())
	}
	var out NodeMsg
	if err := NewDecoder(&buf).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Start.Job.Env["A"] != "line\nbreak" || out.Start.GPUs[1] != 3 {
		t.Fatalf("round trip: %+v", out.Start)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"v":1,"op":"submit","submit":{"job":{"share":"a"}}}` + "\n"))
	f.Add([]byte(`{"v":1,"op":"stat","stat":{"ids":["1"]}}` + "\n"))
	f.Add([]byte(`{"v":1,"op":"alter","alter":{"id":"1","priority":5}}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dec := NewDecoderLimit(bytes.NewReader(b), 1<<16)
		for i := 0; i < 4; i++ {
			var req Request
			if err := dec.Decode(&req); err != nil {
				return
			}
		}
	})
}

func FuzzDecodeNodeMsg(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"hello","node":"n1","running":[{"job_id":"1.t","run":0}]}` + "\n"))
	f.Add([]byte(`{"v":1,"type":"job_state","job_state":{"job_id":"1.t","state":"exited","exit_status":271}}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m NodeMsg
		_ = NewDecoderLimit(bytes.NewReader(b), 1<<16).Decode(&m)
	})
}

func TestResponsePayload(t *testing.T) {
	var buf bytes.Buffer
	in := &Response{V: Version, Summary: []byte("1.x\tjob\n2.x\tjob\n")}
	if err := WriteResponse(&buf, in); err != nil {
		t.Fatal(err)
	}
	if err := WriteResponse(&buf, &Response{V: Version, Text: "next"}); err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(&buf)
	var a, b Response
	if err := dec.ReadResponse(&a); err != nil || string(a.Summary) != string(in.Summary) || a.Payload != len(in.Summary) {
		t.Fatalf("first: %v %+v", err, a)
	}
	if err := dec.ReadResponse(&b); err != nil || b.Text != "next" || b.Summary != nil {
		t.Fatalf("second: %v %+v", err, b)
	}
	var c Response
	huge := `{"v":1,"payload":99999999}` + "\n"
	if err := NewDecoderLimit(strings.NewReader(huge), 1024).ReadResponse(&c); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized payload: %v", err)
	}
	short := `{"v":1,"payload":10}` + "\nabc"
	if err := NewDecoder(strings.NewReader(short)).ReadResponse(&c); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short payload: %v", err)
	}
}

// TestResponseWireFields: responseWire has Response's JSON fields, in order,
// so that no field of an answer is lost on its way to a client.
func TestResponseWireFields(t *testing.T) {
	names := func(typ reflect.Type) []string {
		var out []string
		for i := range typ.NumField() {
			if tag := typ.Field(i).Tag.Get("json"); tag != "-" {
				out = append(out, typ.Field(i).Name+" "+tag)
			}
		}
		return out
	}
	got, want := names(reflect.TypeFor[responseWire]()), names(reflect.TypeFor[Response]())
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("responseWire fields:\n%q\nResponse fields:\n%q", got, want)
	}
}

// TestReadResponseEveryField: every field of a Response survives
// WriteResponse and ReadResponse, lists included, and a reused Response
// keeps nothing of the previous answer.
func TestReadResponseEveryField(t *testing.T) {
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	in := &Response{
		V: Version, Error: &Error{Code: CodeBadRequest, Message: "m"}, Errors: []Error{{Code: CodeInternal, Message: "e"}},
		JobID: "7.lab", Jobs: []Job{{ID: "7.lab", Name: "j", State: StateQueued}}, Shares: []ShareStatus{{Name: "vision"}},
		Nodes: []NodeStatus{{Name: "n1"}}, Text: "t", Usage: []UsageRow{{Key: "alice", Jobs: 2}},
		Timeline: []UsagePoint{{Time: at, Share: "vision", Owned: 1}}, Controllers: []ControllerStatus{{Host: "c1", Leader: true}},
		Session: &SessionGrant{Job: "7.lab", Token: "x", Expires: at}, Summary: []byte("7.lab\tj\n"),
	}
	var buf bytes.Buffer
	if err := WriteResponse(&buf, in); err != nil {
		t.Fatal(err)
	}
	if err := WriteResponse(&buf, &Response{V: Version, JobID: "8.lab"}); err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(&buf)
	var out Response
	if err := dec.ReadResponse(&out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&out, in) {
		t.Fatalf("read\n%+v\nwant\n%+v", out, *in)
	}
	if err := dec.ReadResponse(&out); err != nil {
		t.Fatal(err)
	}
	if want := (Response{V: Version, JobID: "8.lab"}); !reflect.DeepEqual(out, want) {
		t.Fatalf("second answer read as %+v, want %+v", out, want)
	}
	for _, field := range []string{"jobs", "error", "errors", "session"} {
		bad := `{"v":1,"` + field + `":[{"id":5}]}` + "\n"
		if err := NewDecoder(strings.NewReader(bad)).ReadResponse(&out); err == nil || !strings.Contains(err.Error(), field) {
			t.Fatalf("malformed %s: %v", field, err)
		}
	}
	// null is no value, as encoding/json reads it into a pointer or slice.
	if err := NewDecoder(strings.NewReader(`{"v":1,"error":null,"errors":null,"session":null,"job_id":"9.lab"}` + "\n")).ReadResponse(&out); err != nil ||
		!reflect.DeepEqual(out, Response{V: 1, JobID: "9.lab"}) {
		t.Fatalf("nulls read as %+v, %v", out, err)
	}
}

// TestRequestWireFields: requestWire has Request's JSON fields, in order.
func TestRequestWireFields(t *testing.T) {
	names := func(typ reflect.Type) []string {
		var out []string
		for i := range typ.NumField() {
			out = append(out, typ.Field(i).Name+" "+typ.Field(i).Tag.Get("json"))
		}
		return out
	}
	got, want := names(reflect.TypeFor[requestWire]()), names(reflect.TypeFor[Request]())
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("requestWire fields:\n%q\nRequest fields:\n%q", got, want)
	}
}

// TestEncodeRequest: EncodeRequest writes the bytes Encode writes, for every
// operation's payload.
func TestEncodeRequest(t *testing.T) {
	prio := 5
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		req  Request
	}{
		{"empty", Request{}},
		{"submit", Request{V: Version, Op: OpSubmit, Submit: &SubmitSpec{PBSPriority: &prio, Job: JobSpec{
			Name: "a<b>&c", Share: "vision", Script: "#!/bin/sh\necho \"\u2028\"\n", WorkDir: "/home/u", Env: map[string]string{"B": "2", "A": "1"},
			Resources: Resources{Nodes: 2, GPUsPerNode: 8}, NotBefore: at, Deps: []Dep{{Type: jobid.AfterOK, On: "1.lab"}}, Hold: "u"}}}},
		{"stat", Request{V: Version, Op: OpStat, Stat: &StatFilter{IDs: []string{"1.lab"}}}},
		{"alter", Request{V: Version, Op: OpAlter, IDs: []string{"1.lab"}, Alter: &AlterSpec{Priority: &prio, NotBefore: &at}}},
		{"report", Request{V: Version, Op: OpReport, Report: &ReportSpec{}}},
		{"session", Request{V: Version, Op: OpSession, IDs: []string{"1.lab"}, Session: &SessionSpec{}, Force: true, Node: "n1"}},
		{"comment", Request{V: Version, Op: OpDrain, Node: "n1", Comment: &[]string{"fan \"<replaced>\""}[0]}},
		{"empty comment", Request{V: Version, Op: OpComment, Node: "n1", Comment: new(string)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got, want bytes.Buffer
			if err := EncodeRequest(&got, &tc.req); err != nil {
				t.Fatal(err)
			}
			if err := Encode(&want, tc.req); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("EncodeRequest:\n%s\nEncode:\n%s", got.String(), want.String())
			}
		})
	}
}

// FuzzReadResponse: ReadResponse (through responseWire, its fields decoded
// only when present) reads an answer line as encoding/json reads it into a
// Response, or fails where that fails. Lines with a top-level key twice
// are left out: encoding/json merges two objects given for one pointer
// field, where a raw field keeps the last.
func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{`{"v":1,"job_id":"12.lab"}`, `{"v":1,"error":{"code":"bad_request","message":"m","id":"1.lab"}}`,
		`{"v":1,"errors":[{"code":"unknown_job","message":"x"}],"jobs":[{"id":"1.lab","name":"j"}]}`,
		`{"v":1,"session":{"job":"1.lab","token":"t","expires":"2026-03-02T10:00:00Z"}}`, `{"v":1,"error":null,"Errors":[]}`,
		`{"v":1,"error":[1]}`, `{"v":1,"session":{"expires":"x"}}`, `{"v":1,"text":"a\u2028b","payload":0}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") || duplicateKeys(line) {
			return
		}
		var got Response
		errGot := NewDecoder(strings.NewReader(line + "\n")).ReadResponse(&got)
		var want Response
		errWant := json.Unmarshal([]byte(line), &want)
		if errWant == nil && (want.Payload < 0 || want.Payload > MaxMessage) {
			errWant = ErrTooLarge
		}
		if errWant == nil && want.Payload > 0 {
			errWant = io.ErrUnexpectedEOF // the line holds no payload after it
		}
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("%q: ReadResponse %v; encoding/json %v", line, errGot, errWant)
		}
		if errGot == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: ReadResponse %+v; encoding/json %+v", line, got, want)
		}
	})
}

// duplicateKeys says whether a JSON object's top level names a key
// twice, folding case as encoding/json matches names.
func duplicateKeys(line string) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &top) != nil {
		return false
	}
	dec := json.NewDecoder(strings.NewReader(line))
	seen, depth := map[string]bool{}, 0
	for expectKey := false; ; {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
			// A key comes next after the top object opens, and after a
			// nested value closes back into it.
			expectKey = depth == 1
			continue
		case string:
			if depth == 1 && expectKey {
				k := strings.ToLower(v)
				if seen[k] {
					return true
				}
				seen[k] = true
				expectKey = false
				continue
			}
		}
		if depth == 1 {
			expectKey = true
		}
	}
}
