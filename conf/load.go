package conf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Load reads and validates the configuration file at path. An invalid file
// gives Problems; a file that cannot be read gives the os error, wrapped.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("conf: %w", err)
	}
	return Parse(path, data)
}

// Parse validates a configuration held in data; file names it in problems
// ("<config>" when empty). Every problem in the file is reported at once,
// as Problems.
func Parse(file string, data []byte) (*Config, error) {
	if file == "" {
		file = "<config>"
	}
	doc, perr := decodeTOML(file, data)
	if perr != nil {
		return nil, Problems{*perr}
	}
	l := &loader{file: file, data: string(data)}
	cfg := l.config(doc)
	if len(l.probs) > 0 {
		sortProblems(l.probs)
		return nil, l.probs
	}
	cfg.File = file
	sortProblems(l.warns)
	cfg.Warnings = l.warns
	return cfg, nil
}

// LoadCluster reads only the [cluster] table of the configuration file
// at path, checked as Load checks it (Problems with file and line): what a
// client command needs to find the controller, without reading or checking
// the partitions, nodes and shares (which Load does, and which cost a
// qsub's every run for nothing). The same TOML parser reads the file.
//
// The parser reads only the file's lines up to the end of its [cluster]
// table (clusterPart), with their comment lines blanked where that changes
// nothing (blankComments), when they hold that table without a problem:
// the TOML parser's cost is in its lexing, and the tables after [cluster]
// (scheduler, partitions, nodes, shares) are most of a site's file, and
// comments most of the rest.
// Otherwise, a problem included, it reads the whole file, so that every
// problem is the one a whole read reports.
func LoadCluster(path string) (Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Cluster{}, fmt.Errorf("conf: %w", err)
	}
	if part, ok := clusterPart(data); ok {
		if c, err := loadCluster(path, blankComments(part)); err == nil {
			return c, nil
		}
	}
	return loadCluster(path, data)
}

// blankComments is part with every comment line (a line whose first
// character but blanks is '#') made empty, its newline kept so that every
// other line keeps its number and columns, when that cannot change what
// part holds nor whether it parses: part has no multi-line string (no
// three quotes of either kind in a row), the one place where such a line
// is not a comment, and every comment is one the TOML lexer takes (valid
// UTF-8, no control character but tab, no carriage return but a CRLF's).
// Otherwise it is part itself. The lexer's cost is per byte, and a site's [cluster] table is
// mostly comments (the example's: 63 of its 86 lines).
func blankComments(part []byte) []byte {
	if bytes.Contains(part, []byte(`"""`)) || bytes.Contains(part, []byte(`'''`)) {
		return part
	}
	out := make([]byte, 0, len(part))
	for line := range bytes.Lines(part) {
		text := bytes.TrimLeft(line, " \t")
		if len(text) == 0 || text[0] != '#' {
			out = append(out, line...)
			continue
		}
		body := text
		if n := len(body); n > 0 && body[n-1] == '\n' {
			body = body[:n-1]
			if n := len(body); n > 0 && body[n-1] == '\r' {
				body = body[:n-1]
			}
		}
		if !lexableComment(body) {
			return part
		}
		out = append(out, text[len(body):]...) // the newline
	}
	return out
}

// lexableComment says whether the TOML lexer reads comment (from its '#' to
// its end of line, the newline excluded) without an error.
func lexableComment(comment []byte) bool {
	for _, c := range comment {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return utf8.Valid(comment)
}

// clusterPart is the start of a TOML document up to the end of its
// [cluster] table: up to the first line, after the line "[cluster]"
// (blanks and a comment after it allowed), that starts a table ("[" its
// first character but blanks). ok is false when there is nothing to cut:
// no such [cluster] line, or no table after it.
// A cut inside a multi-line string or array leaves it unterminated, which
// the parser refuses, and LoadCluster reads the whole file.
func clusterPart(data []byte) (part []byte, ok bool) {
	inCluster := false
	off := 0
	for whole := range bytes.Lines(data) {
		line := bytes.TrimLeft(whole, " \t")
		switch {
		case inCluster && len(line) > 0 && line[0] == '[':
			return data[:off], true
		case !inCluster && bytes.HasPrefix(line, []byte("[cluster]")):
			rest := bytes.TrimLeft(line[len("[cluster]"):], " \t\r\n")
			inCluster = len(rest) == 0 || rest[0] == '#'
		}
		off += len(whole)
	}
	return data, false
}

// loadCluster is LoadCluster on data, the contents of the file at path.
func loadCluster(path string, data []byte) (Cluster, error) {
	doc, perr := decodeTOML(path, data)
	if perr != nil {
		return Cluster{}, Problems{*perr}
	}
	l := &loader{file: path, data: string(data)}
	root := l.table(nil, "", doc)
	ct := root.subtable("cluster", "cluster")
	present := ct != nil
	if !present {
		if !root.has("cluster") {
			l.add(nil, "missing [cluster] table (cluster.name is required)")
		}
		ct = l.table([]string{"cluster"}, "cluster", nil)
	}
	c := l.cluster(ct, present)
	if len(l.probs) > 0 {
		sortProblems(l.probs)
		return Cluster{}, l.probs
	}
	return c, nil
}

// decodeTOML parses data into generic maps, turning a syntax error into a
// Problem.
func decodeTOML(file string, data []byte) (doc map[string]any, perr *Problem) {
	defer func() {
		// The TOML parser reports syntax errors itself; this only turns a
		// crash inside it into a problem instead of taking the daemon down.
		if r := recover(); r != nil {
			doc, perr = nil, &Problem{File: file, Msg: fmt.Sprintf("TOML parser failed: %v", r)}
		}
	}()
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Problem{File: file, Line: pe.Position.Line, Col: pe.Position.Col, Msg: pe.Message}
		}
		return nil, &Problem{File: file, Msg: err.Error()}
	}
	return doc, nil
}

// config reads the whole document.
func (l *loader) config(doc map[string]any) *Config {
	root := l.table(nil, "", doc)
	cfg := &Config{}

	ct := root.subtable("cluster", "cluster")
	if ct == nil {
		if !root.has("cluster") {
			l.add(nil, "missing [cluster] table (cluster.name is required)")
		}
		ct = l.table([]string{"cluster"}, "cluster", nil)
		cfg.Cluster = l.cluster(ct, false)
	} else {
		cfg.Cluster = l.cluster(ct, true)
	}

	cfg.Etcd = l.etcd(root.subtable("etcd", "etcd"), cfg.Cluster.Name, cfg.Cluster.Spool)
	l.clusterMounts, l.checkpointRoot = cfg.Cluster.Mounts, cfg.Cluster.CheckpointRoot

	rt := root.subtable("runtime", "runtime")
	if rt == nil {
		rt = l.table([]string{"runtime"}, "runtime", nil)
	}
	cfg.Runtime = l.runtime(rt)

	partTables := root.tables("partition")
	nodeTables := root.tables("node")
	shareTables := root.tables("share")
	topoTables := root.tables("topology")
	domainTables := root.tables("domain")
	cfg.Accounting = l.accounting(root.subtable("accounting", "accounting"), cfg.Cluster.SpoolDir)
	cfg.Scheduler = l.scheduler(root.subtable("scheduler", "scheduler"))
	root.unknown(keys[""]...)

	// An absent or empty array is reported here; a value of another
	// kind was reported by tables.
	for _, k := range []struct {
		key    string
		tables []*table
	}{{"partition", partTables}, {"share", shareTables}} {
		if v, ok := doc[k.key]; len(k.tables) == 0 && (!ok || isEmptyArray(v)) {
			l.add(nil, "no [[%s]] block (at least one is required)", k.key)
		}
	}
	parts := l.partitions(partTables)
	nodes := l.nodes(nodeTables)
	l.assignNodes(parts, nodes)
	cfg.Partitions = make([]Partition, len(parts))
	for i, p := range parts {
		cfg.Partitions[i] = p.Partition
	}
	for _, nb := range nodes {
		cfg.Nodes = append(cfg.Nodes, nb.nodes...)
	}
	declared := map[string]bool{}
	for _, nb := range nodes {
		if !nb.namesOK {
			declared = nil
			break
		}
		for _, n := range nb.nodes {
			declared[n.Name] = true
		}
	}
	tops := l.topologies(topoTables, domainTables, declared)
	l.partitionTopologies(parts, tops)
	for _, b := range tops {
		cfg.Topologies = append(cfg.Topologies, b.Topology)
	}
	shares := l.shares(shareTables, parts)
	for _, s := range shares {
		cfg.Shares = append(cfg.Shares, s.Share)
	}
	l.checkQuotas(parts, nodes, shares)
	l.checkFairKeys(cfg.Scheduler, shares)
	if d := cfg.Cluster.DefaultShare; d != "" && cfg.Share(d) == nil {
		var names []string
		for _, s := range cfg.Shares {
			names = append(names, s.Name)
		}
		ct.errf("default_share", "%q is not a [[share]] (shares: %s)", d, strings.Join(names, ", "))
	}
	return cfg
}

func isEmptyArray(v any) bool {
	switch v := v.(type) {
	case []any:
		return len(v) == 0
	case []map[string]any:
		return len(v) == 0
	}
	return false
}
