package ctld

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"unicode"
	"unicode/utf8"

	"github.com/sharq-hpc/sharq/api"
)

// commentsKey is where the spool keeps the admins' comments on nodes
// (pbsnodes -C), a JSON object of node name to comment.
const commentsKey = "node-comments"

// checkNodeComment refuses a comment that is too long or that a terminal
// would take for something else (control characters, invalid UTF-8).
func checkNodeComment(s string) error {
	switch {
	case len(s) > api.MaxNodeComment:
		return fmt.Errorf("comment of %d bytes, at most %d", len(s), api.MaxNodeComment)
	case !utf8.ValidString(s):
		return errors.New("comment is not UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) || !unicode.IsPrint(r) && r != ' ' {
			return fmt.Errorf("comment has the character %U", r)
		}
	}
	return nil
}

// commentNode is pbsnodes -C: an admin's comment on a node ("" removes it).
func (c *Controller) commentNode(id Identity, name string, comment *string) *api.Error {
	if !c.auth.isAdmin(id) {
		return &api.Error{Code: api.CodePermission, Message: "only admins may comment on nodes"}
	}
	if c.cfg.Node(name) == nil {
		return &api.Error{Code: api.CodeBadRequest, Message: fmt.Sprintf("no node %q", name)}
	}
	if comment == nil {
		return &api.Error{Code: api.CodeBadRequest, Message: "node " + name + ": no comment"}
	}
	if err := checkNodeComment(*comment); err != nil {
		return &api.Error{Code: api.CodeBadRequest, Message: fmt.Sprintf("node %s: %v", name, err)}
	}
	if e := c.setNodeComment(name, *comment); e != nil {
		return e
	}
	c.log.Info("node comment changed by admin", "node", name, "comment", *comment, "by", id.User)
	return nil
}

// setNodeComment sets a checked comment and writes every node's to the
// spool (synced); on a spool error the comment stays as it was.
func (c *Controller) setNodeComment(name, comment string) *api.Error {
	n := c.node(name)
	was := n.comment
	n.comment = comment
	if err := c.saveComments(); err != nil {
		n.comment = was
		return &api.Error{Code: api.CodeInternal, Message: "node " + name + ": " + err.Error()}
	}
	return nil
}

func (c *Controller) saveComments() error {
	all := map[string]string{}
	for name, n := range c.nodes {
		if n.comment != "" {
			all[name] = n.comment
		}
	}
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	return c.sp.SetState(bgctx, commentsKey, b)
}

// restoreComments reads the comments back after a restart; a node no
// longer configured, or a comment that no longer passes the check, is
// left out.
func (c *Controller) restoreComments(ctx context.Context) error {
	b, err := c.sp.State(ctx, commentsKey)
	if err != nil || b == nil {
		return err
	}
	var all map[string]string
	if err := json.Unmarshal(b, &all); err != nil {
		return fmt.Errorf("spool state %s: %w", commentsKey, err)
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if c.cfg.Node(name) == nil || checkNodeComment(all[name]) != nil {
			continue
		}
		c.node(name).comment = all[name]
	}
	return nil
}
