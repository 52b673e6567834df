package manpage

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// ConfigPage is the page of the configuration file, made from the
// commented example configuration (contrib/examples/cluster.toml): its
// opening comment is the DESCRIPTION, the comment before a table header
// the table's introduction, and the comment before a key (set, or
// commented out as "# key = value") that key's documentation, with the
// key lines as its example; keys set right after a documented one share
// its documentation. A table or key may be commented out, "# [etcd]".
//
// keys are the loader's keys by table (conf.Keys). Every key the example
// documents must be one of them, and every one of them documented: the
// page covers the loader exactly, or ConfigPage fails.
func ConfigPage(p *Page, example string, keys map[string][]string) error {
	doc, err := parseExample(example, keys)
	if err != nil {
		return err
	}
	var missing []string
	for table, ks := range keys {
		if table == "" {
			continue
		}
		for _, k := range ks {
			if _, ok := doc.documented[table+"."+k]; !ok {
				missing = append(missing, table+"."+k)
			}
		}
		if _, ok := doc.tables[table]; !ok {
			missing = append(missing, "["+table+"]")
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("the example configuration does not document %s", strings.Join(missing, ", "))
	}
	p.Description = doc.intro
	keysSection := Section{Title: "TABLES AND KEYS"}
	for _, t := range doc.order {
		keysSection.Sub = append(keysSection.Sub, *doc.tables[t])
	}
	p.Sections = append([]Section{keysSection}, p.Sections...)
	return nil
}

type exampleDoc struct {
	intro      string
	order      []string            // tables in file order
	tables     map[string]*Section // by table name
	documented map[string]bool     // "table.key"
}

var (
	headerRE = regexp.MustCompile(`^(?:#\s?)?\[(\[?)([a-z_]+)\]?\]$`)
	keyRE    = regexp.MustCompile(`^(?:#\s?)?([a-z_]+) = \S`)
)

// parseExample reads the commented example; see ConfigPage.
func parseExample(example string, keys map[string][]string) (*exampleDoc, error) {
	d := &exampleDoc{tables: map[string]*Section{}, documented: map[string]bool{}}
	lines := strings.Split(example, "\n")
	i := 0
	for ; i < len(lines) && strings.HasPrefix(lines[i], "#"); i++ {
		d.intro += comment(lines[i]) + "\n"
	}
	var (
		table   string
		pending []string // comment lines since the last blank or statement
		last    *Entry   // the entry the previous line set a key of
	)
	for n := i; n < len(lines); n++ {
		l := strings.TrimRight(lines[n], " \t")
		at := fmt.Sprintf("line %d", n+1)
		if m := headerRE.FindStringSubmatch(l); m != nil {
			table = m[2]
			if _, ok := keys[table]; !ok {
				return nil, fmt.Errorf("%s: table [%s] is not one the loader reads", at, table)
			}
			if _, ok := d.tables[table]; !ok {
				title := "[" + table + "]"
				if m[1] != "" {
					title = "[[" + table + "]]"
				}
				d.tables[table] = &Section{Title: title, Text: strings.Join(pending, "\n")}
				d.order = append(d.order, table)
			}
			pending, last = nil, nil
			continue
		}
		if m := keyRE.FindStringSubmatch(l); m != nil && table != "" && slices.Contains(keys[table], m[1]) && isTOML(l) {
			key, value := m[1], strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "#"), " "))
			sec := d.tables[table]
			switch {
			case len(pending) > 0:
				if d.documented[table+"."+key] {
					return nil, fmt.Errorf("%s: %s.%s is documented twice", at, table, key)
				}
				sec.Entries = append(sec.Entries, Entry{Tag: key, Text: strings.Join(pending, "\n") + "\n"})
				last = &sec.Entries[len(sec.Entries)-1]
				d.documented[table+"."+key] = true
				addExample(last, value)
			case last != nil && !d.documented[table+"."+key]:
				last.Tag += ", " + key
				d.documented[table+"."+key] = true
				addExample(last, value)
			case d.documented[table+"."+key]:
				// A later block's value of a documented key.
			default:
				return nil, fmt.Errorf("%s: %s.%s has no comment above it", at, table, key)
			}
			pending = nil
			continue
		}
		switch {
		case l == "":
			pending, last = nil, nil
		case strings.HasPrefix(l, "#"):
			pending = append(pending, comment(l))
			last = nil
		default:
			return nil, fmt.Errorf("%s: neither a table, a key the loader reads, a comment nor blank: %q", at, l)
		}
	}
	return d, nil
}

// isTOML says whether a key line, commented out or not, is TOML: "#
// default_image = "host" implies it." is prose.
func isTOML(l string) bool {
	var v map[string]any
	_, err := toml.Decode(strings.TrimPrefix(l, "#"), &v)
	return err == nil
}

// addExample adds a key line to an entry's example block.
func addExample(e *Entry, keyLine string) {
	if !strings.Contains(e.Text, "\nExample:\n") {
		e.Text += "\nExample:\n"
	}
	e.Text += "   " + keyLine + "\n"
}

// comment is a comment line's text.
func comment(l string) string {
	l = strings.TrimPrefix(l, "#")
	return strings.TrimPrefix(l, " ")
}
