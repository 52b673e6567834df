package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// ExitUnknownNode: pbsnodes of a node the cluster does not have
// (PBSE_UNKNODE 15062).
const ExitUnknownNode = 214

// Pbsnodes shows nodes as PBS's pbsnodes does (pbsnodes -a[v] [-F json|dsv],
// pbsnodes NODE..., pbsnodes -l) and, for admins, takes them out of service
// and back (pbsnodes -o NODE..., pbsnodes -r|-c NODE...), with a comment
// (-C).
func Pbsnodes(ctx context.Context, args []string, sys *Sys) int {
	var (
		all, vnodes, list, offline, reset, clear bool
		format, delim                            string
		comment                                  string
		commented                                bool
	)
	app := newApp(sys, "pbsnodes", "show nodes; take them out of service and back",
		"pbsnodes -a[v] [-F json|dsv [-D DELIM]]\n"+
			"pbsnodes [-v] [-F json|dsv] NODE...\n"+
			"pbsnodes -l\n"+
			"pbsnodes -o NODE...    (admins: drain, as sharqctl node drain)\n"+
			"pbsnodes -r NODE...    (admins: back in service, as sharqctl node resume)\n"+
			"pbsnodes -c NODE...    (admins: the same as -r)\n"+
			"pbsnodes [-o|-r|-c] -C COMMENT NODE...    (admins: the nodes' comment; \"\" removes it)",
		`Shows each node with PBS's attribute names: state (free, job-busy, offline,
down), pcpus, jobs, resources_available.* and resources_assigned.* (ngpus, ncpus,
mem), and sharq's own: partition, the GPU indices in use (gpus_in_use) and the
node's problems, after an admin's own comment (-C), as its comment. -l lists
the nodes that are down or offline. A sharq node is one vnode, so -v shows the
same as without it.

-c clears offline as -r does. OpenPBS's -c also clears down; a sharq node is
down only while the controller does not hear from it, which no command can
clear: it is up again once it talks (sharqctl show nodes says why it is down).

Examples:
   pbsnodes -a
   pbsnodes -a -F json | jq '.nodes[] | .state'
   pbsnodes -l
   pbsnodes -o gpu07`)
	app.Flags = []ucli.Flag{
		&ucli.BoolFlag{Name: "a", Usage: "every node", Destination: &all, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "v", Usage: "vnodes (a sharq node is one vnode)", Destination: &vnodes, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "l", Usage: "the nodes that are down or offline, with why", Destination: &list, DisableDefaultText: true},
		&ucli.StringFlag{Name: "F", Usage: "output `FORMAT`: json (OpenPBS's) or dsv", Destination: &format},
		&ucli.StringFlag{Name: "D", Usage: "with -F dsv, the `DELIMITER` between attributes (default |)", Destination: &delim},
		&ucli.BoolFlag{Name: "o", Usage: "admins: mark the nodes offline (drain: running jobs go on, no new ones start)", Destination: &offline, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "r", Usage: "admins: clear offline (resume)", Destination: &reset, DisableDefaultText: true},
		&ucli.GenericFlag{Name: "C", Usage: "admins: set the nodes' `COMMENT` (alone or with -o, -r, -c; \"\" removes it)", Value: funcValue(func(v string) error {
			comment, commented = v, true
			return nil
		})},
		&ucli.BoolFlag{Name: "c", Usage: "admins: clear offline, as -r (a down node is up again once it talks to the controller)", Destination: &clear, DisableDefaultText: true},
	}
	app.Action = func(c *ucli.Context) error {
		names := c.Args().Slice()
		format = strings.ToLower(format)
		modes := 0
		for _, m := range []bool{all, list, offline, reset, clear} {
			if m {
				modes++
			}
		}
		switch {
		case modes > 1:
			return usagef("-a, -l, -o, -r and -c go one at a time")
		case format != formatText && format != formatJSON && format != formatDSV:
			return usagef("-F %s: the formats are json and dsv", format)
		case delim != "" && format != formatDSV:
			return usagef("-D goes with -F dsv")
		case list && len(names) > 0, all && len(names) > 0:
			return usagef("-a and -l take no node names")
		case commented && (all || list || format != formatText):
			return usagef("-C goes with node names, alone or with -o, -r or -c")
		case !all && !list && len(names) == 0:
			return usagef("name nodes, or -a for all of them")
		case (offline || reset || clear) && format != formatText:
			return usagef("-F goes with showing nodes")
		}
		if offline || reset || clear || commented {
			op := api.OpComment
			switch {
			case offline:
				op = api.OpDrain
			case reset || clear:
				op = api.OpResume
			}
			var text *string
			if commented {
				text = &comment
			}
			return pbsnodesMark(c.Context, sys, op, text, names)
		}
		resp, err := call(c.Context, sys, api.Request{Op: api.OpNodes})
		if err != nil {
			return err
		}
		nodes := resp.Nodes
		sort.Slice(nodes, func(i, k int) bool { return nodes[i].Name < nodes[k].Name })
		if list {
			var b strings.Builder
			for _, n := range nodes {
				if st := pbsNodeState(n); st == "down" || st == "offline" {
					fmt.Fprintf(&b, "%-20s %s %s\n", printable(n.Name), st, printable(nodeComment(n)))
				}
			}
			_, err := io.WriteString(sys.Stdout, b.String())
			return err
		}
		code := ExitOK
		if len(names) > 0 {
			var picked []api.NodeStatus
			for _, name := range names {
				i := slices.IndexFunc(nodes, func(n api.NodeStatus) bool { return n.Name == name })
				if i < 0 {
					fmt.Fprintf(sys.Stderr, "pbsnodes: Unknown node  %s\n", name)
					code = ExitUnknownNode
					continue
				}
				picked = append(picked, nodes[i])
			}
			nodes = picked
		}
		jobs, err := nodeJobs(c.Context, sys)
		if err != nil {
			return err
		}
		switch format {
		case formatJSON:
			server, _ := clusterNames(c.Context, sys)
			err = writeNodesJSON(sys.Stdout, nodes, jobs, server, sys)
		case formatDSV:
			err = writeNodesDSV(sys.Stdout, nodes, jobs, delim)
		default:
			err = writeNodes(sys.Stdout, nodes, jobs)
		}
		if err == nil && code != ExitOK {
			err = exitStatus(code)
		}
		return err
	}
	return run(ctx, app, sys, args)
}

// pbsnodesMark drains (-o), resumes (-r, -c) or comments on (-C) nodes,
// one request each; comment, when not nil, goes with each.
func pbsnodesMark(ctx context.Context, sys *Sys, op api.Op, comment *string, names []string) error {
	code := ExitOK
	for _, n := range names {
		if _, err := call(ctx, sys, api.Request{Op: op, Node: n, Comment: comment}); err != nil {
			var ae *api.Error
			if !errors.As(err, &ae) {
				return err
			}
			fmt.Fprintf(sys.Stderr, "pbsnodes: Error marking node %s - %s\n", n, ae.Message)
			if code == ExitOK {
				code = codeStatus(ae.Code)
			}
		}
	}
	if code != ExitOK {
		return exitStatus(code)
	}
	return nil
}

// nodeJobs maps each node to the jobs running on it, in job order.
func nodeJobs(ctx context.Context, sys *Sys) (map[string][]string, error) {
	resp, err := call(ctx, sys, api.Request{Op: api.OpStat, Stat: &api.StatFilter{Summary: true, Subjobs: true}})
	if err != nil {
		return nil, err
	}
	rows, err := api.ParseSummaries(string(resp.Summary))
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, r := range rows {
		if r.State != api.StateRunning && r.State != api.StateExiting {
			continue
		}
		for _, a := range r.Allocs {
			out[a.Node] = append(out[a.Node], r.ID)
		}
	}
	return out, nil
}

// pbsNodeState is a node's state in PBS's words.
func pbsNodeState(n api.NodeStatus) string {
	switch n.State {
	case "up":
		if n.GPUs > 0 && len(n.UsedGPUs) >= n.GPUs {
			return "job-busy"
		}
		return "free"
	case "drained":
		return "offline"
	}
	return "down"
}

// pbsNodeAttrs are a node's attributes as pbsnodes shows them.
func pbsNodeAttrs(n api.NodeStatus, jobs []string) []pbsAttr {
	out := []pbsAttr{
		{name: "Mom", value: n.Name},
		{name: "ntype", value: "PBS"},
		{name: "state", value: pbsNodeState(n)},
	}
	inv := n.Inventory
	if inv != nil && inv.CPUs > 0 {
		out = append(out, pbsAttr{name: "pcpus", value: strconv.Itoa(inv.CPUs)})
	}
	if len(jobs) > 0 {
		slots := make([]string, len(jobs))
		for i, j := range jobs {
			slots[i] = j + "/0"
		}
		out = append(out, pbsAttr{name: "jobs", value: strings.Join(slots, ", ")})
	}
	out = append(out, pbsAttr{name: "resources_available", resource: "host", value: n.Name})
	if inv != nil && inv.MemBytes > 0 {
		out = append(out, pbsAttr{name: "resources_available", resource: "mem", value: conf.FormatSize(inv.MemBytes)})
	}
	if inv != nil && inv.CPUs > 0 {
		out = append(out, pbsAttr{name: "resources_available", resource: "ncpus", value: strconv.Itoa(inv.CPUs)})
	}
	out = append(out,
		pbsAttr{name: "resources_available", resource: "ngpus", value: strconv.Itoa(n.GPUs)},
		pbsAttr{name: "resources_available", resource: "vnode", value: n.Name},
		pbsAttr{name: "resources_assigned", resource: "ngpus", value: strconv.Itoa(len(n.UsedGPUs))},
		pbsAttr{name: "resv_enable", value: "True"},
		pbsAttr{name: "sharing", value: "default_shared"},
	)
	if cm := nodeComment(n); cm != "" {
		out = append(out, pbsAttr{name: "comment", value: cm})
	}
	// sharq's own.
	out = append(out, pbsAttr{name: "partition", value: n.Partition})
	if len(n.UsedGPUs) > 0 {
		g := slices.Clone(n.UsedGPUs)
		sort.Ints(g)
		out = append(out, pbsAttr{name: "gpus_in_use", value: compressInts(g)})
	}
	return out
}

// writeNodes writes pbsnodes -a: the node's name, its attributes indented
// five spaces, and a blank line.
func writeNodes(w io.Writer, nodes []api.NodeStatus, jobs map[string][]string) error {
	var b strings.Builder
	for _, n := range nodes {
		b.WriteString(printable(n.Name) + "\n")
		for _, a := range pbsNodeAttrs(n, jobs[n.Name]) {
			fmt.Fprintf(&b, "     %s = %s\n", a.key(), printable(a.value))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNodesDSV writes pbsnodes -a -F dsv: a line per node, Name=NODE and
// its attributes separated by delim.
func writeNodesDSV(w io.Writer, nodes []api.NodeStatus, jobs map[string][]string, delim string) error {
	if delim == "" {
		delim = "|"
	}
	esc := strings.NewReplacer(`\`, `\\`, delim, `\`+delim, "\n", `\n`)
	var b strings.Builder
	for _, n := range nodes {
		b.WriteString("Name=" + esc.Replace(n.Name))
		for _, a := range pbsNodeAttrs(n, jobs[n.Name]) {
			b.WriteString(delim + a.key() + "=" + esc.Replace(a.value))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNodesJSON writes pbsnodes -a -F json: OpenPBS's envelope with the
// nodes under "nodes" (writePBSJSON).
func writeNodesJSON(w io.Writer, nodes []api.NodeStatus, jobs map[string][]string, server string, sys *Sys) error {
	objs := make([]pbsJSONObject, len(nodes))
	for i, n := range nodes {
		objs[i] = pbsJSONObject{name: n.Name, attrs: pbsNodeAttrs(n, jobs[n.Name])}
	}
	return writePBSJSON(w, "nodes", server, objs, sys)
}

// nodeComment is PBS's comment attribute of a node: the admin's comment,
// then the node's problems.
func nodeComment(n api.NodeStatus) string {
	parts := n.Problems
	if n.Comment != "" {
		parts = append([]string{n.Comment}, parts...)
	}
	return strings.Join(parts, "; ")
}
