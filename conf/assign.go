package conf

// assignNodes gives every declared node the partition whose nodes list
// names it, and reports nodes named by no block, by two partitions, or by
// no partition.
func (l *loader) assignNodes(parts []*partBlock, nodes []*nodeBlock) {
	declared := map[string]*Node{}
	allNamed := true
	for _, b := range nodes {
		allNamed = allNamed && b.namesOK
		for i := range b.nodes {
			declared[b.nodes[i].Name] = &b.nodes[i]
		}
	}
	allListed := true
	owner := map[string]string{}
	for _, p := range parts {
		allListed = allListed && p.nodesOK
		var undeclared, taken []string
		takenBy := ""
		for _, n := range p.Nodes {
			node := declared[n]
			switch o, ok := owner[n]; {
			case ok:
				taken = append(taken, n)
				if takenBy == "" {
					takenBy = o
				}
			case node == nil:
				undeclared = append(undeclared, n)
			default:
				owner[n] = p.Name
				node.Partition = p.Name
			}
		}
		if len(undeclared) > 0 && allNamed {
			p.t.errf("nodes", "%s not declared by any [[node]] block", CompressHostlist(undeclared))
		}
		if len(taken) > 0 {
			p.t.errf("nodes", "%s already in partition %q (a node belongs to one partition)", CompressHostlist(taken), takenBy)
		}
	}
	if !allListed {
		return
	}
	for _, b := range nodes {
		var orphans []string
		for _, n := range b.nodes {
			if _, ok := owner[n.Name]; !ok {
				orphans = append(orphans, n.Name)
			}
		}
		if len(orphans) > 0 {
			b.t.errf("names", "%s in no partition (list every node in the nodes of one [[partition]])", CompressHostlist(orphans))
		}
	}
}
