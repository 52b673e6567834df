package cli

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

// The parsers themselves are conf.ParseSize and conf.ParseDuration, tested
// there; these are the display forms qstat writes.
func TestUnitsDisplay(t *testing.T) {
	for _, tt := range []struct {
		name, got, want string
	}{
		{"hms zero", FormatHMS(0), "00:00:00"},
		{"hms negative", FormatHMS(-time.Second), "00:00:00"},
		{"hms past a day", FormatHMS(100*time.Hour + 61*time.Second), "100:01:01"},
		{"hms truncates", FormatHMS(time.Minute + 999*time.Millisecond), "00:01:00"},
		{"hm zero", formatHM(0), "--"},
		{"hm", formatHM(90 * time.Minute), "01:30"},
		{"hm past a day", formatHM(49*time.Hour + 5*time.Minute), "49:05"},
		{"short zero", formatSizeShort(0), "--"},
		{"short bytes", formatSizeShort(500), "500b"},
		{"short whole", formatSizeShort(64 << 30), "64gb"},
		{"short fraction", formatSizeShort(1536 << 20), "1.5gb"},
		{"short large", formatSizeShort(150 << 30), "150gb"},
		{"short rounds", formatSizeShort(100<<30 + 600<<20), "101gb"},
		{"short tb", formatSizeShort(2 << 40), "2tb"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestParseResourceList(t *testing.T) {
	type res = api.Resources
	tests := []struct {
		name string
		in   []string // successive -l values
		want res
		err  string
	}{
		{name: "none", in: nil, want: res{Nodes: 1}},
		{name: "simple", in: []string{"ngpus=4,ncpus=16,mem=64gb,walltime=12:00:00"},
			want: res{Nodes: 1, GPUsPerNode: 4, CPUsPerNode: 16, MemPerNode: 64 << 30, Walltime: 12 * time.Hour}},
		{name: "gpus alias", in: []string{"gpus=2"}, want: res{Nodes: 1, GPUsPerNode: 2}},
		{name: "select", in: []string{"select=2:ngpus=8"}, want: res{Nodes: 2, GPUsPerNode: 8}},
		{name: "select full", in: []string{"select=4:ngpus=8:ncpus=64:mem=512gb", "walltime=1:00:00"},
			want: res{Nodes: 4, GPUsPerNode: 8, CPUsPerNode: 64, MemPerNode: 512 << 30, Walltime: time.Hour}},
		{name: "select without count", in: []string{"select=ngpus=2"}, want: res{Nodes: 1, GPUsPerNode: 2}},
		{name: "torque nodes", in: []string{"nodes=2:gpus=8"}, want: res{Nodes: 2, GPUsPerNode: 8}},
		{name: "torque ppn", in: []string{"nodes=3:ppn=16:gpus=4"}, want: res{Nodes: 3, GPUsPerNode: 4, CPUsPerNode: 16}},
		{name: "nodes only", in: []string{"nodes=2"}, want: res{Nodes: 2}},
		{name: "nodect", in: []string{"nodect=2"}, want: res{Nodes: 2}},
		{name: "later wins", in: []string{"ngpus=2", "ngpus=4"}, want: res{Nodes: 1, GPUsPerNode: 4}},
		{name: "separate options merge", in: []string{"select=2:ngpus=8", "walltime=600"}, want: res{Nodes: 2, GPUsPerNode: 8, Walltime: 10 * time.Minute}},
		{name: "upper case key", in: []string{"NGPUS=1"}, want: res{Nodes: 1, GPUsPerNode: 1}},
		{name: "zero gpus", in: []string{"ngpus=0"}, want: res{Nodes: 1}},
		{name: "empty", in: []string{""}, err: "empty -l value"},
		{name: "no value", in: []string{"ngpus="}, err: "has no value"},
		{name: "no equals", in: []string{"ngpus"}, err: "want key=value"},
		{name: "unknown", in: []string{"x-y=1"}, err: `"x-y": unknown resource`},
		{name: "not a label value", in: []string{"gpu_type=a 100"}, err: `"gpu_type": unknown resource`},
		{name: "label", in: []string{"select=2:ngpus=4:gpu_type=a100:ib=hdr"}, want: res{Nodes: 2, GPUsPerNode: 4, Labels: map[string]string{"gpu_type": "a100", "ib": "hdr"}}},
		{name: "top-level label", in: []string{"ngpus=1,gpu_model=V100"}, want: res{Nodes: 1, GPUsPerNode: 1, Labels: map[string]string{"gpu_model": "V100"}}},
		{name: "mpiprocs and ompthreads", in: []string{"select=2:ncpus=16:mpiprocs=4:ompthreads=4"}, want: res{Nodes: 2, CPUsPerNode: 16, MPIProcs: 4, OMPThreads: 4}},
		{name: "zero mpiprocs", in: []string{"select=1:mpiprocs=0"}, err: "want 1 to 4096"},
		{name: "scatter", in: []string{"select=2:ngpus=2", "place=scatter"}, want: res{Nodes: 2, GPUsPerNode: 2}},
		{name: "pack", in: []string{"select=2:ngpus=2:ncpus=4:mem=1gb:mpiprocs=2,place=pack"}, want: res{Nodes: 1, GPUsPerNode: 4, CPUsPerNode: 8, MemPerNode: 2 << 30, MPIProcs: 4}},
		{name: "pack shared", in: []string{"select=3:ngpus=1", "place=pack:shared"}, want: res{Nodes: 1, GPUsPerNode: 3, MPIProcs: 3}},
		{name: "scatter excl", in: []string{"select=2:ngpus=2", "place=scatter:excl"}, want: res{Nodes: 2, GPUsPerNode: 2, Exclusive: true}},
		{name: "excl", in: []string{"place=excl"}, want: res{Nodes: 1, Exclusive: true}},
		{name: "exclhost", in: []string{"place=exclhost:free"}, want: res{Nodes: 1, Exclusive: true}},
		{name: "pack excl", in: []string{"select=2:ngpus=1,place=pack:excl"}, want: res{Nodes: 1, GPUsPerNode: 2, MPIProcs: 2, Exclusive: true}},
		{name: "later place replaces", in: []string{"place=pack:excl", "select=2:ngpus=1", "place=scatter"}, want: res{Nodes: 2, GPUsPerNode: 1}},
		{name: "two arrangements", in: []string{"place=pack:scatter"}, err: "two arrangements (pack and scatter)"},
		{name: "two sharings", in: []string{"place=excl:shared"}, err: "two sharing values (excl and shared)"},
		{name: "group", in: []string{"select=4:ngpus=8", "place=scatter:excl:group=rack"}, want: res{Nodes: 4, GPUsPerNode: 8, Exclusive: true, Group: "rack"}},
		{name: "group with a wait", in: []string{"select=2:ngpus=8,place=group=switch@2h"}, want: res{Nodes: 2, GPUsPerNode: 8, Group: "switch", GroupWait: 2 * time.Hour}},
		{name: "preferred group", in: []string{"place=prefer_group=rack:excl"}, want: res{Nodes: 1, Group: "rack", GroupPreferred: true, Exclusive: true}},
		{name: "later place drops the group", in: []string{"place=group=rack", "place=scatter"}, want: res{Nodes: 1}},
		{name: "two groups", in: []string{"place=group=rack:prefer_group=rack"}, err: "two groupings"},
		{name: "group without level", in: []string{"place=group="}, err: "want a topology level"},
		{name: "group wait with colons", in: []string{"place=group=rack@1:00:00"}, err: "a group's wait takes no colons"},
		{name: "group bad wait", in: []string{"place=group=rack@soon"}, err: "want a wait such as rack@30m"},
		{name: "preferred group with a wait", in: []string{"place=prefer_group=rack@1h"}, err: "a preferred group takes no wait"},
		{name: "bad place", in: []string{"place=spread"}, err: `"spread" is not free, scatter`},
		{name: "place in a chunk", in: []string{"select=1:place=pack"}, err: "place is not a per-node resource"},
		{name: "bad number", in: []string{"ngpus=four"}, err: "want a whole number"},
		{name: "negative", in: []string{"ncpus=-1"}, err: "want a whole number"},
		{name: "walltime days", in: []string{"walltime=1:00:00:00"}, want: res{Nodes: 1, Walltime: 24 * time.Hour}},
		{name: "walltime seconds", in: []string{"walltime=3600"}, want: res{Nodes: 1, Walltime: time.Hour}},
		{name: "walltime go", in: []string{"walltime=90m"}, want: res{Nodes: 1, Walltime: 90 * time.Minute}},
		{name: "walltime day unit", in: []string{"walltime=1d12h"}, want: res{Nodes: 1, Walltime: 36 * time.Hour}},
		{name: "mem units", in: []string{"mem=512mb"}, want: res{Nodes: 1, MemPerNode: 512 << 20}},
		{name: "mem tb", in: []string{"mem=1tb"}, want: res{Nodes: 1, MemPerNode: 1 << 40}},
		{name: "mem GiB", in: []string{"mem=64GiB"}, want: res{Nodes: 1, MemPerNode: 64 << 30}},
		{name: "mem bytes", in: []string{"mem=1048576"}, want: res{Nodes: 1, MemPerNode: 1 << 20}},
		{name: "bad mem", in: []string{"mem=lots"}, err: `mem: bad size "lots"`},
		{name: "fractional mem", in: []string{"mem=1.5gb"}, want: res{Nodes: 1, MemPerNode: 3 << 29}},
		{name: "fractional mem, Cromwell's", in: []string{"mem=2.0gb"}, want: res{Nodes: 1, MemPerNode: 2 << 30}},
		{name: "negative mem", in: []string{"mem=-1gb"}, err: `bad size "-1gb"`},
		{name: "huge mem", in: []string{"mem=8388608tb"}, err: "too large"},
		{name: "bad walltime", in: []string{"walltime=12:61:00"}, err: `walltime: bad duration "12:61:00": field "61" out of range`},
		{name: "walltime hours past days", in: []string{"walltime=1:24:00:00"}, err: "out of range"},
		{name: "walltime fields", in: []string{"walltime=1:2:3:4:5"}, err: "too many fields"},
		{name: "negative walltime", in: []string{"walltime=-5m"}, err: `bad duration "-5m": negative`},
		{name: "fractional walltime", in: []string{"walltime=1.5"}, err: `bad duration "1.5"`},
		{name: "junk walltime", in: []string{"walltime=abc"}, err: `bad duration "abc"`},
		{name: "zero walltime", in: []string{"walltime=0"}, err: "above zero"},
		{name: "select zero", in: []string{"select=0:ngpus=1"}, err: "at least 1"},
		{name: "select plus", in: []string{"select=1:ngpus=8+1:ngpus=4"}, err: "different shapes"},
		{name: "node names", in: []string{"nodes=gpu01:ppn=4"}, err: "node names are not supported"},
		{name: "select walltime", in: []string{"select=2:walltime=1:00:00"}, err: "walltime is not a per-node resource"},
		{name: "chunk junk", in: []string{"select=2:fast"}, err: `"fast" is not res=value`},
		{name: "nodect extra", in: []string{"nodect=2:ngpus=1"}, err: "want a node count"},
		{name: "huge", in: []string{"ngpus=99999999"}, err: "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r resSpec
			var err error
			for _, s := range tt.in {
				if err = parseResourceList(s, &r); err != nil {
					break
				}
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrBadResource) {
					t.Fatalf("err = %v, want ErrBadResource containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.resources(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("resources = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestResSpecOverlay(t *testing.T) {
	var dir, cmd resSpec
	if err := parseResourceList("select=2:ngpus=8:mem=64gb,walltime=1:00:00", &dir); err != nil {
		t.Fatal(err)
	}
	if err := parseResourceList("ngpus=4", &cmd); err != nil {
		t.Fatal(err)
	}
	dir.overlay(cmd)
	want := api.Resources{Nodes: 2, GPUsPerNode: 4, MemPerNode: 64 << 30, Walltime: time.Hour}
	if got := dir.resources(); !reflect.DeepEqual(got, want) {
		t.Errorf("overlay = %+v, want %+v", got, want)
	}
	if got := formatSelect(want); got != "2:ngpus=4:mem=64gb" {
		t.Errorf("formatSelect = %q", got)
	}
}

func TestParseDepend(t *testing.T) {
	tests := []struct {
		in   string
		want []api.Dep
		err  string
	}{
		{"afterok:123", []api.Dep{{Type: jobid.AfterOK, On: "123"}}, ""},
		{"afterok:1:2.lab", []api.Dep{{Type: jobid.AfterOK, On: "1"}, {Type: jobid.AfterOK, On: "2.lab"}}, ""},
		{"afterok:1,afternotok:2,afterany:3[],after:4[7].lab", []api.Dep{{Type: jobid.AfterOK, On: "1"}, {Type: jobid.AfterNotOK, On: "2"}, {Type: jobid.AfterAny, On: "3[]"}, {Type: jobid.After, On: "4[7].lab"}}, ""},
		{"AfterOK:5", []api.Dep{{Type: jobid.AfterOK, On: "5"}}, ""},
		{"afterok:1:1,afterok:1", []api.Dep{{Type: jobid.AfterOK, On: "1"}}, ""},
		{"", nil, "empty"},
		{"afterok", nil, "names no job"},
		{"afterok:", nil, "is not a job id"},
		{"afterok:abc", nil, "is not a job id"},
		{"afterok:1,", nil, "unknown type"},
		{"before:1", nil, "not supported"},
		{"beforeok:1", nil, "not supported"},
		{"runone:1", nil, "not supported"},
		{"whenever:1", nil, "unknown type"},
		{"afterok:1@server", nil, "is not a job id"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDepend(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrBadDepend) {
					t.Fatalf("ParseDepend(%q) = %v, %v; want ErrBadDepend containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseDepend(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	deps := []api.Dep{{Type: jobid.AfterOK, On: "1.lab"}, {Type: jobid.AfterOK, On: "2.lab"}, {Type: jobid.AfterAny, On: "3.lab"}}
	if got := formatDepend(deps); got != "afterok:1.lab:2.lab,afterany:3.lab" {
		t.Errorf("formatDepend = %q", got)
	}
}

func TestParseDateTime(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		berlin = time.FixedZone("CET", 3600)
	}
	// now: Sunday 1 March 2026, 12:00 UTC
	tests := []struct {
		in   string
		loc  *time.Location
		want time.Time
		err  string
	}{
		{in: "1330", loc: time.UTC, want: time.Date(2026, 3, 1, 13, 30, 0, 0, time.UTC)},
		{in: "1130", loc: time.UTC, want: time.Date(2026, 3, 2, 11, 30, 0, 0, time.UTC)}, // past today: tomorrow
		{in: "1200", loc: time.UTC, want: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},  // now is not past
		{in: "1330.45", loc: time.UTC, want: time.Date(2026, 3, 1, 13, 30, 45, 0, time.UTC)},
		{in: "051800", loc: time.UTC, want: time.Date(2026, 3, 5, 18, 0, 0, 0, time.UTC)},
		{in: "010900", loc: time.UTC, want: time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)}, // day 1 past: next month
		{in: "310900", loc: time.UTC, want: time.Date(2026, 3, 31, 9, 0, 0, 0, time.UTC)},
		{in: "02011200", loc: time.UTC, want: time.Date(2027, 2, 1, 12, 0, 0, 0, time.UTC)}, // past this year
		{in: "12312359", loc: time.UTC, want: time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC)},
		{in: "02291200", loc: time.UTC, want: time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC)},  // next leap year
		{in: "2601011200", loc: time.UTC, want: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}, // year given: past kept
		{in: "202612311800", loc: time.UTC, want: time.Date(2026, 12, 31, 18, 0, 0, 0, time.UTC)},
		{in: "1230", loc: berlin, want: time.Date(2026, 3, 2, 12, 30, 0, 0, berlin)}, // it is 13:00 in Berlin
		{in: "1330", loc: berlin, want: time.Date(2026, 3, 1, 13, 30, 0, 0, berlin)},
		{in: "", err: "want"},
		{in: "930", err: "want"},
		{in: "2400", err: "hour"},
		{in: "1260", err: "minute"},
		{in: "1200.5", err: "two digits"},
		{in: "1200.60", err: "seconds"},
		{in: "321200", err: "day"},
		{in: "001200", err: "day"},
		{in: "13011200", err: "month"},
		{in: "2602301200", err: "no such date"},
		{in: "12:00", err: "want"},
		{in: "1234567890123", err: "want"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			loc := tt.loc
			if loc == nil {
				loc = time.UTC
			}
			got, err := ParseDateTime(tt.in, testNow, loc)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrBadTime) {
					t.Fatalf("ParseDateTime(%q) = %v, %v; want ErrBadTime containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Fatalf("ParseDateTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseArray(t *testing.T) {
	tests := []struct {
		in      string
		indices string
		max     int
		err     string
	}{
		{"0-99", "0-99", 0, ""},
		{"1-100:2", "1-100:2", 0, ""},
		{"0-99%10", "0-99", 10, ""},
		{"0-99:1%5", "0-99", 5, ""},
		{"5-5", "5-5", 0, ""},
		{"", "", 0, "want start-end"},
		{"10", "", 0, "want start-end"},
		{"9-1", "", 0, "start is after end"},
		{"0-9:0", "", 0, "step"},
		{"0-9%0", "", 0, "%max"},
		{"a-b", "", 0, "want start-end"},
		{"0-99999999999", "", 0, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			rng, m, err := ParseArray(tt.in)
			idx := rng.Text()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrBadArray) {
					t.Fatalf("ParseArray(%q) err = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || idx != tt.indices || m != tt.max {
				t.Fatalf("ParseArray(%q) = %q, %d, %v; want %q, %d", tt.in, idx, m, err, tt.indices, tt.max)
			}
		})
	}
}

func TestExpandJobIDs(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
		err  bool
	}{
		{"plain", []string{"123", "124.lab", "125[]", "126[7].lab"}, []string{"123", "124.lab", "125[]", "126[7].lab"}, false},
		{"range", []string{"123[2-5]"}, []string{"123[2]", "123[3]", "123[4]", "123[5]"}, false},
		{"range suffix", []string{"123[2-3].lab"}, []string{"123[2].lab", "123[3].lab"}, false},
		{"step", []string{"9[1-7:3]"}, []string{"9[1]", "9[4]", "9[7]"}, false},
		{"list", []string{"9[1,4,7-8]"}, []string{"9[1]", "9[4]", "9[7]", "9[8]"}, false},
		{"empty range", []string{"9[5-2]"}, nil, true},
		{"bad step", []string{"9[1-5:0]"}, nil, true},
		{"step without range", []string{"9[1:2]"}, nil, true},
		{"junk", []string{"9[1--2]"}, nil, true},
		{"too many", []string{"9[0-99999999]"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expandJobIDs(tt.in)
			if tt.err {
				if !errors.Is(err, ErrBadArray) {
					t.Fatalf("expandJobIDs(%q) = %v, %v; want ErrBadArray", tt.in, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("expandJobIDs(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseDirectives(t *testing.T) {
	tests := []struct {
		name   string
		script string
		prefix string
		want   []Directive
		err    string
	}{
		{name: "basic", script: "#!/bin/bash\n#PBS -N train\n#PBS -l ngpus=4 -q vision\necho hi\n",
			want: []Directive{{2, []string{"-N", "train"}}, {3, []string{"-l", "ngpus=4", "-q", "vision"}}}},
		{name: "comments and blanks between", script: "#!/bin/sh\n\n# setup\n#PBS -N a\n   \n#PBS -j oe\n",
			want: []Directive{{4, []string{"-N", "a"}}, {6, []string{"-j", "oe"}}}},
		{name: "stops at first command", script: "#PBS -N a\necho start\n#PBS -N b\n",
			want: []Directive{{1, []string{"-N", "a"}}}},
		{name: "indented", script: "  #PBS -N a\n", want: []Directive{{1, []string{"-N", "a"}}}},
		{name: "crlf", script: "#PBS -N a\r\n#PBS -q b\r\n", want: []Directive{{1, []string{"-N", "a"}}, {2, []string{"-q", "b"}}}},
		{name: "trailing comment", script: "#PBS -N a # the name\n", want: []Directive{{1, []string{"-N", "a"}}}},
		{name: "quotes", script: `#PBS -v "MSG=hello world",X='a b' -N a\#b` + "\n",
			want: []Directive{{1, []string{"-v", "MSG=hello world,X=a b", "-N", "a#b"}}}},
		{name: "not a directive", script: "#PBSX -N a\n#PBS\n#!/bin/sh\n", want: nil},
		{name: "other prefix", script: "#PBS -N a\n#SQ -N b\n", prefix: "#SQ", want: []Directive{{2, []string{"-N", "b"}}}},
		{name: "no prefix", script: "#PBS -N a\n", prefix: "-", want: nil},
		{name: "unterminated", script: "#PBS -N 'a\n", err: "line 1: unterminated single quote"},
		{name: "unterminated double", script: "#!/bin/sh\n#PBS -N \"a\n", err: "line 2: unterminated double quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := tt.prefix
			switch prefix {
			case "":
				prefix = DefaultDirectivePrefix
			case "-":
				prefix = ""
			}
			got, err := ParseDirectives(tt.script, prefix)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrBadDirective) {
					t.Fatalf("err = %v, want ErrBadDirective containing %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseDirectives = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestParseVariableList(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		in   string
		want []envVar
		err  bool
	}{
		{"A=1", []envVar{{"A", s("1")}}, false},
		{"A=1,B,C=", []envVar{{"A", s("1")}, {"B", nil}, {"C", s("")}}, false},
		{"A='x,y',B=\"p,q\"", []envVar{{"A", s("x,y")}, {"B", s("p,q")}}, false},
		{"A=b=c", []envVar{{"A", s("b=c")}}, false},
		{"1A=1", nil, true},
		{"", nil, true},
		{"A='x", nil, true},
		{"A=1,,B=2", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseVariableList(tt.in)
			if tt.err {
				if !errors.Is(err, ErrBadVariable) {
					t.Fatalf("parseVariableList(%q) = %v, %v; want ErrBadVariable", tt.in, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseVariableList(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestCompressInts(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{{nil, ""}, {[]int{3}, "3"}, {[]int{0, 1, 2, 3}, "0-3"}, {[]int{0, 2, 3, 5, 7, 8}, "0,2-3,5,7-8"}} {
		if got := compressInts(tt.in); got != tt.want {
			t.Errorf("compressInts(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
