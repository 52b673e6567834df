package api

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendSubmit appends req, a submit request (V, Op and Submit set,
// nothing else), as one JSON line: the bytes Encode writes (encoding/json's,
// HTML escaping and sorted map keys included), made without reflection.
// encoding/json prepares an encoder for every type of a value the first
// time it meets the type; for a submission (Request, SubmitSpec, JobSpec,
// Resources, Dep, their maps and times) that is 0.15-0.35 ms of a one-shot
// qsub process, 30 to 70 times the encoding itself. ok is false for any
// other request, and for a submission that encoding/json would refuse (a
// not-before time outside years 0-9999), which Encode then reports as
// before. FuzzSubmitWire fills every field of a SubmitSpec by reflection
// (a field added to one of its types and not written here fails it) and
// compares the bytes with Encode's.
func appendSubmit(b []byte, req *Request) (_ []byte, ok bool) {
	s := req.Submit
	if req.Op != OpSubmit || s == nil || req.IDs != nil || req.Stat != nil || req.Alter != nil || req.Node != "" ||
		req.Report != nil || req.Force || req.Session != nil {
		return b, false
	}
	j := &s.Job
	var notBefore []byte
	if !j.NotBefore.IsZero() {
		var err error
		if notBefore, err = j.NotBefore.MarshalJSON(); err != nil {
			return b, false
		}
	}
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(req.V), 10)
	b = append(b, `,"op":`...)
	b = appendJSONString(b, string(req.Op))
	b = append(b, `,"submit":{"job":{`...)
	w := fieldWriter{b: b}
	w.str("name", j.Name, true)
	w.str("share", j.Share, false)
	w.str("script", j.Script, true)
	w.str("shell", j.Shell, true)
	if len(j.Command) > 0 {
		w.key("command")
		w.b = append(w.b, '[')
		for i, a := range j.Command {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = appendJSONString(w.b, a)
		}
		w.b = append(w.b, ']')
	}
	w.str("workdir", j.WorkDir, false)
	w.strMap("env", j.Env)
	w.str("stdout", j.Stdout, true)
	w.str("stderr", j.Stderr, true)
	w.str("image", j.Image, true)
	w.int("grace", int64(j.Grace), true)
	w.str("join", j.Join, true)
	w.str("umask", j.Umask, true)

	w.key("resources")
	r := &j.Resources
	w.b = append(w.b, '{')
	rw := fieldWriter{b: w.b}
	rw.int("nodes", int64(r.Nodes), false)
	rw.int("gpus_per_node", int64(r.GPUsPerNode), false)
	rw.int("cpus_per_node", int64(r.CPUsPerNode), true)
	rw.int("mem_per_node", r.MemPerNode, true)
	rw.int("walltime", int64(r.Walltime), true)
	rw.int("mpiprocs", int64(r.MPIProcs), true)
	rw.int("ompthreads", int64(r.OMPThreads), true)
	rw.strMap("labels", r.Labels)
	rw.bool("exclusive", r.Exclusive)
	rw.str("group", r.Group, true)
	rw.bool("group_preferred", r.GroupPreferred)
	rw.int("group_wait", int64(r.GroupWait), true)
	w.b = append(rw.b, '}')

	w.str("hold", j.Hold, true)
	if notBefore != nil {
		w.key("not_before")
		w.b = append(w.b, notBefore...)
	}
	if len(j.Deps) > 0 {
		w.key("deps")
		w.b = append(w.b, '[')
		for i, d := range j.Deps {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `{"type":`...)
			t, err := d.Type.MarshalText()
			if err != nil {
				return b, false // Encode reports it
			}
			w.b = appendJSONString(w.b, string(t))
			w.b = append(w.b, `,"on":`...)
			w.b = appendJSONString(w.b, d.On)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	if !j.ArrayIndices.IsZero() {
		t, err := j.ArrayIndices.MarshalText()
		if err != nil {
			return b, false // Encode reports it
		}
		w.str("array_indices", string(t), false)
	}
	w.int("array_max", int64(j.ArrayMax), true)
	w.bool("interactive", j.Interactive)
	b = append(w.b, '}')
	if s.Priority != nil {
		b = append(b, `,"priority":`...)
		b = strconv.AppendInt(b, int64(*s.Priority), 10)
	}
	if s.PBSPriority != nil {
		b = append(b, `,"pbs_priority":`...)
		b = strconv.AppendInt(b, int64(*s.PBSPriority), 10)
	}
	if s.RequestID != "" {
		b = append(b, `,"request_id":`...)
		b = appendJSONString(b, s.RequestID)
	}
	return append(b, "}}\n"...), true
}

// fieldWriter appends the fields of one JSON object, commas between them;
// each method with omitEmpty leaves out a zero value, as encoding/json's
// omitempty does.
type fieldWriter struct {
	b    []byte
	some bool
}

func (w *fieldWriter) key(name string) {
	if w.some {
		w.b = append(w.b, ',')
	}
	w.some = true
	w.b = append(w.b, '"')
	w.b = append(w.b, name...) // the names are plain ASCII
	w.b = append(w.b, '"', ':')
}

func (w *fieldWriter) str(name, v string, omitEmpty bool) {
	if omitEmpty && v == "" {
		return
	}
	w.key(name)
	w.b = appendJSONString(w.b, v)
}

func (w *fieldWriter) int(name string, v int64, omitEmpty bool) {
	if omitEmpty && v == 0 {
		return
	}
	w.key(name)
	w.b = strconv.AppendInt(w.b, v, 10)
}

// bool writes v when it is true (omitempty).
func (w *fieldWriter) bool(name string, v bool) {
	if v {
		w.key(name)
		w.b = append(w.b, "true"...)
	}
}

// strMap writes m with its keys in byte order (omitempty).
func (w *fieldWriter) strMap(name string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	w.key(name)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.b = append(w.b, '{')
	for i, k := range keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendJSONString(w.b, k)
		w.b = append(w.b, ':')
		w.b = appendJSONString(w.b, m[k])
	}
	w.b = append(w.b, '}')
}

// appendJSONString appends s as a JSON string as encoding/json writes it
// with HTML escaping: ", \ and control characters escaped (\b \f \n \r \t
// by name, others as \u00XX), <, > and & as \u003c \u003e \u0026, U+2028
// and U+2029 as \u2028 \u2029, and each byte of invalid UTF-8 as \ufffd.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
