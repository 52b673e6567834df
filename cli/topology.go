package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// TopologyDomain is one row of sharqctl show topology: a domain of a
// topology level, its nodes and their GPUs (sharqctl show topology --json
// writes these).
type TopologyDomain struct {
	Topology   string   `json:"topology"`
	Partitions []string `json:"partitions,omitempty"` // the partitions placed by the topology
	Level      string   `json:"level"`
	Domain     string   `json:"domain"`
	Nodes      string   `json:"nodes"`     // a hostlist
	NodesUp    int      `json:"nodes_up"`  // nodes that take jobs (up)
	GPUs       int      `json:"gpus"`      // on all its nodes
	UsedGPUs   int      `json:"used_gpus"` // held by jobs
	FreeGPUs   int      `json:"free_gpus"` // neither used nor on a node that is not up
}

// topologyDomains is every domain of cfg's topologies, in file order, with
// its GPUs as nodes reports them.
func topologyDomains(cfg *conf.Config, nodes []api.NodeStatus) []TopologyDomain {
	byName := make(map[string]*api.NodeStatus, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var out []TopologyDomain
	for _, t := range cfg.Topologies {
		var parts []string
		for _, p := range cfg.Partitions {
			if p.Topology == t.Name {
				parts = append(parts, p.Name)
			}
		}
		for _, d := range t.Domains {
			row := TopologyDomain{Topology: t.Name, Partitions: parts, Level: d.Level, Domain: d.Name, Nodes: conf.CompressHostlist(d.Nodes)}
			for _, name := range d.Nodes {
				n := byName[name]
				if n == nil {
					continue
				}
				row.GPUs += n.GPUs
				row.UsedGPUs += len(n.UsedGPUs)
				if n.State == "up" {
					row.NodesUp++
					row.FreeGPUs += max(0, n.GPUs-len(n.UsedGPUs))
				}
			}
			out = append(out, row)
		}
	}
	return out
}

// showTopology is sharqctl show topology: the configuration the controller
// runs with, and its nodes' GPUs now.
func showTopology(ctx context.Context, sys *Sys, asJSON bool) error {
	cr, err := call(ctx, sys, api.Request{Op: api.OpConfig})
	if err != nil {
		return err
	}
	cfg, err := conf.Parse("the controller's configuration", []byte(cr.Text))
	if err != nil {
		return fmt.Errorf("the controller's configuration: %w", err)
	}
	nr, err := call(ctx, sys, api.Request{Op: api.OpNodes})
	if err != nil {
		return err
	}
	rows := topologyDomains(cfg, nr.Nodes)
	if asJSON {
		if rows == nil {
			rows = []TopologyDomain{}
		}
		return writeJSON(sys.Stdout, rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(sys.Stdout, "no topology is configured ([[topology]] and [[domain]] in the configuration)")
		return err
	}
	return writeTopologyTable(sys.Stdout, rows, sys)
}

// writeTopologyTable writes the domains, one a line, each level's domains
// indented under the topology's name.
func writeTopologyTable(w io.Writer, rows []TopologyDomain, sys *Sys) error {
	t := &table{Fit: sys.Terminal, Color: sys.Color, Cols: []column{
		{Head: []string{"Topology"}, Width: 10, Trunc: true},
		{Head: []string{"Partitions"}, Width: 10, Trunc: true},
		{Head: []string{"Level"}, Width: 8, Trunc: true},
		{Head: []string{"Domain"}, Width: 10, Trunc: true},
		{Head: []string{"Nodes"}, Width: 16, Trunc: true},
		{Head: []string{"Up"}, Width: 4, Right: true},
		{Head: []string{"GPUs"}, Width: 5, Right: true},
		{Head: []string{"Used"}, Width: 5, Right: true},
		{Head: []string{"Free"}, Width: 5, Right: true},
	}}
	for _, r := range rows {
		parts := strings.Join(r.Partitions, ",")
		if parts == "" {
			parts = "-"
		}
		free := cell{Text: strconv.Itoa(r.FreeGPUs)}
		if r.FreeGPUs == r.GPUs && r.GPUs > 0 {
			free.Style = styleGreen // a whole domain free
		}
		t.Rows = append(t.Rows, []cell{
			{Text: r.Topology}, {Text: parts}, {Text: r.Level}, {Text: r.Domain}, {Text: r.Nodes},
			{Text: strconv.Itoa(r.NodesUp)}, {Text: strconv.Itoa(r.GPUs)}, {Text: strconv.Itoa(r.UsedGPUs)}, free,
		})
	}
	return t.render(w)
}
