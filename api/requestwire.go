package api

import (
	"encoding/json"
	"fmt"
	"io"
)

// requestWire is how a client writes a Request: the same JSON (byte for
// byte), with each operation's payload marshalled on its own, so that a
// one-shot client (a qsub process) prepares encoders for its own payload's
// types only, not for every operation's (see responseWire). Its fields are
// Request's, in order (TestRequestWireFields).
type requestWire struct {
	V       int             `json:"v"`
	Op      Op              `json:"op"`
	IDs     []string        `json:"ids,omitempty"`
	Submit  json.RawMessage `json:"submit,omitempty"`
	Stat    json.RawMessage `json:"stat,omitempty"`
	Alter   json.RawMessage `json:"alter,omitempty"`
	Node    string          `json:"node,omitempty"`
	Report  json.RawMessage `json:"report,omitempty"`
	Force   bool            `json:"force,omitempty"`
	Session json.RawMessage `json:"session,omitempty"`
	Signal  Signal          `json:"signal,omitempty"`
	Share   string          `json:"share,omitempty"`
	Comment *string         `json:"comment,omitempty"`
}

// EncodeRequest writes req as one line, as Encode does.
func EncodeRequest(w io.Writer, req *Request) error {
	if line, ok := appendSubmit(nil, req); ok {
		_, err := w.Write(line)
		return err
	}
	wire := requestWire{V: req.V, Op: req.Op, IDs: req.IDs, Node: req.Node, Force: req.Force, Signal: req.Signal, Share: req.Share, Comment: req.Comment}
	var err error
	raw := func(v any, isNil bool) json.RawMessage {
		if isNil || err != nil {
			return nil
		}
		var b []byte
		b, err = json.Marshal(v)
		return b
	}
	wire.Submit = raw(req.Submit, req.Submit == nil)
	wire.Stat = raw(req.Stat, req.Stat == nil)
	wire.Alter = raw(req.Alter, req.Alter == nil)
	wire.Report = raw(req.Report, req.Report == nil)
	wire.Session = raw(req.Session, req.Session == nil)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return Encode(w, &wire)
}
