//go:build !unit

package ctld

import (
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestNodeComment: an admin's comment on a node (pbsnodes -C), alone or
// with a drain or resume, shows in the node's status, outlives a restart,
// and is refused to users and when hostile.
func TestNodeComment(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8", "n2:8"}, twoShares)
	str := func(s string) *string { return &s }
	root := Identity{UID: 0, User: "root"}
	comments := func() map[string]string {
		out := map[string]string{}
		for _, n := range tc.call(api.Request{Op: api.OpNodes}).Nodes {
			out[n.Name] = n.Comment
		}
		return out
	}
	steps := []struct {
		name string
		who  *Identity // nil: root
		req  api.Request
		code string // "": accepted
		want map[string]string
	}{
		{"comment alone", nil, api.Request{Op: api.OpComment, Node: "n1", Comment: str("fan replaced, watch it")}, "",
			map[string]string{"n1": "fan replaced, watch it", "n2": ""}},
		{"drain with a comment", nil, api.Request{Op: api.OpDrain, Node: "n2", Comment: str("DIMM errors")}, "",
			map[string]string{"n1": "fan replaced, watch it", "n2": "DIMM errors"}},
		{"resume keeps it without -C", nil, api.Request{Op: api.OpResume, Node: "n2"}, "",
			map[string]string{"n1": "fan replaced, watch it", "n2": "DIMM errors"}},
		{"empty removes it", nil, api.Request{Op: api.OpComment, Node: "n1", Comment: str("")}, "",
			map[string]string{"n1": "", "n2": "DIMM errors"}},
		{"users may not", &alice, api.Request{Op: api.OpComment, Node: "n1", Comment: str("mine")}, api.CodePermission,
			map[string]string{"n1": "", "n2": "DIMM errors"}},
		{"users may not drain with one", &alice, api.Request{Op: api.OpDrain, Node: "n1", Comment: str("mine")}, api.CodePermission,
			map[string]string{"n1": "", "n2": "DIMM errors"}},
		{"unknown node", nil, api.Request{Op: api.OpComment, Node: "n9", Comment: str("x")}, api.CodeBadRequest,
			map[string]string{"n1": "", "n2": "DIMM errors"}},
		{"no comment", nil, api.Request{Op: api.OpComment, Node: "n1"}, api.CodeBadRequest,
			map[string]string{"n1": "", "n2": "DIMM errors"}},
		{"too long", nil, api.Request{Op: api.OpComment, Node: "n1", Comment: str(strings.Repeat("x", api.MaxNodeComment+1))}, api.CodeBadRequest,
			map[string]string{"n1": "", "n2": "DIMM errors"}},
		{"terminal escape", nil, api.Request{Op: api.OpComment, Node: "n1", Comment: str("ok\x1b[2J")}, api.CodeBadRequest,
			map[string]string{"n1": "", "n2": "DIMM errors"}},
		{"newline", nil, api.Request{Op: api.OpDrain, Node: "n1", Comment: str("a\nb")}, api.CodeBadRequest,
			map[string]string{"n1": "", "n2": "DIMM errors"}},
		// Through the socket JSON would make it U+FFFD: straight to the handler.
		{"not UTF-8", &root, api.Request{Op: api.OpComment, Node: "n1", Comment: str("\xff")}, api.CodeBadRequest,
			map[string]string{"n1": "", "n2": "DIMM errors"}},
		{"at the limit", nil, api.Request{Op: api.OpComment, Node: "n1", Comment: str(strings.Repeat("é", api.MaxNodeComment/2))}, "",
			map[string]string{"n1": strings.Repeat("é", api.MaxNodeComment/2), "n2": "DIMM errors"}},
	}
	for _, s := range steps {
		var resp *api.Response
		if s.who != nil {
			resp = tc.asUser(*s.who, s.req)
		} else {
			resp = tc.call(s.req)
		}
		switch {
		case s.code == "" && resp.Error != nil:
			t.Fatalf("%s: %v", s.name, resp.Error)
		case s.code != "" && (resp.Error == nil || resp.Error.Code != s.code):
			t.Fatalf("%s: error %+v, want code %v", s.name, resp.Error, s.code)
		}
		if got := comments(); got["n1"] != s.want["n1"] || got["n2"] != s.want["n2"] {
			t.Fatalf("%s: comments %q, want %q", s.name, got, s.want)
		}
	}
	// A refused drain changed nothing: n1 is not drained.
	for _, n := range tc.call(api.Request{Op: api.OpNodes}).Nodes {
		if n.Name == "n1" && n.State == "drained" {
			t.Errorf("n1 drained by a refused request")
		}
	}
	tc.restart()
	if got := comments(); got["n1"] != strings.Repeat("é", api.MaxNodeComment/2) || got["n2"] != "DIMM errors" {
		t.Errorf("comments after a restart: %q", got)
	}
}
