package cli

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/jobid"
)

func FuzzParseResourceList(f *testing.F) {
	for _, s := range []string{"ngpus=4,ncpus=16,mem=64gb,walltime=12:00:00", "select=2:ngpus=8", "nodes=2:ppn=4:gpus=8",
		"select=ngpus=1:mem=1tb", "nodect=3", "place=scatter", "select=1:ngpus=8+1:ngpus=4", "walltime=90m", "mem=", ",,", "=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var r resSpec
		if err := parseResourceList(s, &r); err != nil {
			return
		}
		res := r.resources()
		if res.Nodes < 1 || res.GPUsPerNode < 0 || res.CPUsPerNode < 0 || res.MemPerNode < 0 || res.Walltime < 0 {
			t.Fatalf("%q parsed to %+v", s, res)
		}
		// What qstat -f shows as the select statement reads back the same.
		var back resSpec
		if err := parseResourceList("select="+formatSelect(res), &back); err != nil {
			t.Fatalf("select=%s does not parse: %v", formatSelect(res), err)
		}
		got := back.resources()
		got.Walltime = res.Walltime
		if !reflect.DeepEqual(got, res) {
			t.Fatalf("%q: %+v, after select round trip %+v", s, res, got)
		}
	})
}

func FuzzParseDirectives(f *testing.F) {
	for _, s := range []string{"#!/bin/bash\n#PBS -N train\n#PBS -l ngpus=4 -q vision\necho hi\n", "#PBS -v \"A=b c\",X='y z' # c\n",
		"#PBS -N 'x\n", "\r\n#PBS\t-j oe\r\n", "#PBS -N a\\ b\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		dirs, err := ParseDirectives(script, DefaultDirectivePrefix)
		if err != nil {
			return
		}
		lines := strings.Count(script, "\n") + 1
		prev := 0
		for _, d := range dirs {
			if d.Line <= prev || d.Line > lines || len(d.Args) == 0 {
				t.Fatalf("bad directive %+v (previous line %d, %d lines)", d, prev, lines)
			}
			prev = d.Line
			// Quoting the words back gives the same words.
			quoted := make([]string, len(d.Args))
			for i, a := range d.Args {
				quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
			}
			back, err := splitWords(strings.Join(quoted, " "))
			if err != nil || !reflect.DeepEqual(back, d.Args) {
				t.Fatalf("words %q re-split as %q, %v", d.Args, back, err)
			}
		}
	})
}

func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{"1330", "1130.05", "051800", "02291200", "2601011200", "202612311800", "2400", "12:00", "0000.60", "310000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDateTime(s, testNow, time.UTC)
		if err != nil {
			return
		}
		main, secs, _ := strings.Cut(s, ".")
		if got.Format("1504") != main[len(main)-4:] {
			t.Fatalf("%q gave %v: wrong hour or minute", s, got)
		}
		if secs != "" && got.Format("05") != secs {
			t.Fatalf("%q gave %v: wrong seconds", s, got)
		}
		if len(main) <= 8 && (got.Before(testNow) || got.After(testNow.AddDate(9, 0, 0))) {
			t.Fatalf("%q gave %v: not the next such time after %v", s, got, testNow)
		}
	})
}

func FuzzParseDepend(f *testing.F) {
	for _, s := range []string{"afterok:123", "afterok:1:2.lab,afterany:3[],after:4[7].lab", "afternotok:1,afterok:1", "before:1", "afterok:", ":1", "afterok:1,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		deps, err := ParseDepend(s)
		if err != nil {
			return
		}
		if len(deps) == 0 {
			t.Fatalf("%q parsed to no dependency", s)
		}
		back, err := ParseDepend(formatDepend(deps))
		if err != nil || !reflect.DeepEqual(back, deps) {
			t.Fatalf("%q: %v, round trip through %q gave %v, %v", s, deps, formatDepend(deps), back, err)
		}
	})
}

// FuzzFormatHMS checks that what qstat writes as a walltime is read back by
// qsub's parser (conf.ParseDuration) to the second.
func FuzzFormatHMS(f *testing.F) {
	for _, d := range []int64{0, int64(time.Hour), int64(100*time.Hour + 61*time.Second + 5), math.MaxInt64} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		d := time.Duration(n)
		want := max(d, 0).Truncate(time.Second)
		if back, err := conf.ParseDuration(FormatHMS(d)); err != nil || back != want {
			t.Fatalf("%v: round trip through %q gave %v, %v; want %v", d, FormatHMS(d), back, err, want)
		}
	})
}

func FuzzExpandJobIDs(f *testing.F) {
	for _, s := range []string{"123", "123[2-5].lab", "9[1,4,7-8]", "9[1-9:2]", "9[]", "9[5-2]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := expandJobIDs([]string{s})
		if err != nil {
			return
		}
		if len(ids) == 0 || len(ids) > maxExpanded {
			t.Fatalf("%q expanded to %d ids", s, len(ids))
		}
		if len(ids) > 1 {
			for _, id := range ids {
				if _, err := jobid.Parse(id); err != nil {
					t.Fatalf("%q expanded to %q, not a job id", s, id)
				}
			}
		}
	})
}

func FuzzParseVariableList(f *testing.F) {
	for _, s := range []string{"A=1,B", "A='x,y',B=\"p,q\"", "A='x", "=1", "A=b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vars, err := parseVariableList(s)
		if err != nil {
			return
		}
		for _, v := range vars {
			if !envName().MatchString(v.Name) {
				t.Fatalf("%q gave variable name %q", s, v.Name)
			}
		}
	})
}

// FuzzDirectivesJoined: parsing all #PBS lines in one run gives the
// options, and the errors, of a parse per line.
func FuzzDirectivesJoined(f *testing.F) {
	for _, s := range []string{
		"#PBS -N train\n#PBS -l ngpus=4 -q vision\n#PBS -h\n#PBS -V\n",
		"#PBS -N\n#PBS -h\n",               // -N waits for a value: not the next line's -h
		"#PBS -l\n#PBS ngpus=1\n",          // nor the next line's word
		"#PBS -h\n#PBS -l ngpus=1 extra\n", // a word that is not an option
		"#PBS --\n#PBS -N x\n",             // -- on a line of its own
		"#PBS -N a -- b\n#PBS -z\n",        // -- inside a line
		"#PBS -v A=1\n#PBS -v B=2,C\n#PBS -V\n",
		"#PBS -Nfoo\n#PBS -lngpus=2\n#PBS -jo\n", // attached values
		"#PBS -N=x\n#PBS -p=3\n",
		"#PBS -p 5\n#PBS -p 7\n#PBS -N a\n#PBS -N b\n", // the last wins
		"#PBS -W depend=afterok:1\n#PBS -W block=true,grace=5m\n",
		"#PBS -A acct -m abe\n#PBS -M a@b -r y\n#PBS -A x\n", // ignored
		"#PBS -x\n#PBS -N ok\n",                              // unknown
		"#PBS -N bad/name\n#PBS -p 99999\n#PBS -j xx\n",      // invalid values
		"#PBS -J 1-3\n#PBS -t 1-4%2\n",
		"#PBS -I\n#PBS -l select=2:ngpus=8,walltime=1:00:00\n#PBS -o out/ -e err\n",
		"#PBS -u bob\n#PBS -N n\n", // refused
		"#PBS -N -h\n#PBS -l -\n#PBS -\n",
		"#PBS -S /bin/bash -d /tmp -a 2330\n#PBS -k oe -c n\n",
		"#PBS -h=false\n#PBS -V=true\n#PBS --N x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		dirs, err := ParseDirectives(script, DefaultDirectivePrefix)
		if err != nil || len(dirs) > 50 {
			return
		}
		sys := &Sys{Dir: "/work", Now: func() time.Time { return testNow }, Location: time.UTC}
		var joined, perLine qsubOpts
		errJoined := parseDirectives(sys, &joined, dirs, "job.sh", "#PBS")
		errPerLine := parseDirectivesPerLine(sys, &perLine, dirs, "job.sh", "#PBS")
		if fmt.Sprint(errJoined) != fmt.Sprint(errPerLine) {
			t.Fatalf("%q: error %v, a parse per line: %v", script, errJoined, errPerLine)
		}
		if errJoined == nil && !reflect.DeepEqual(joined, perLine) {
			t.Fatalf("%q: options %+v, a parse per line: %+v", script, joined, perLine)
		}
	})
}
