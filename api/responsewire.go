package api

import (
	"encoding/json"
	"fmt"
)

// responseWire is how a client reads a Response: the same JSON, with the
// list fields, the errors and the session grant left raw and decoded only
// when the answer has them. encoding/json prepares a type on first use
// together with every type inside it (Job, NodeStatus, ShareStatus, ...),
// which cost a one-shot client such as a qsub process, whose answer is a
// job id, about as much CPU as the rest of its exchange with the
// controller; Error and SessionGrant were still 40 % of a first decode of
// {"v":1,"job_id":...}. Its fields are Response's, in order
// (TestResponseWireFields).
type responseWire struct {
	V           int             `json:"v"`
	Error       json.RawMessage `json:"error,omitempty"`
	Errors      json.RawMessage `json:"errors,omitempty"`
	JobID       string          `json:"job_id,omitempty"`
	Jobs        json.RawMessage `json:"jobs,omitempty"`
	Shares      json.RawMessage `json:"shares,omitempty"`
	Nodes       json.RawMessage `json:"nodes,omitempty"`
	Text        string          `json:"text,omitempty"`
	Usage       json.RawMessage `json:"usage,omitempty"`
	Timeline    json.RawMessage `json:"timeline,omitempty"`
	Controllers json.RawMessage `json:"controllers,omitempty"`
	Session     json.RawMessage `json:"session,omitempty"`
	Payload     int             `json:"payload,omitempty"`
}

// response fills r from w, decoding the raw fields.
func (w *responseWire) response(r *Response) error {
	*r = Response{V: w.V, JobID: w.JobID, Text: w.Text, Payload: w.Payload}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  any
	}{
		{"error", w.Error, &r.Error}, {"errors", w.Errors, &r.Errors}, {"session", w.Session, &r.Session},
		{"jobs", w.Jobs, &r.Jobs}, {"shares", w.Shares, &r.Shares}, {"nodes", w.Nodes, &r.Nodes},
		{"usage", w.Usage, &r.Usage}, {"timeline", w.Timeline, &r.Timeline}, {"controllers", w.Controllers, &r.Controllers},
	} {
		if len(f.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(f.raw, f.dst); err != nil {
			return fmt.Errorf("decode: malformed message: %s: %w", f.name, err)
		}
	}
	return nil
}
