package cli

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func TestCSVCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"train", "train"},
		{`=HYPERLINK("http://x","y")`, `'=HYPERLINK("http://x","y")`},
		{"+1+1", "'+1+1"},
		{"-2+3", "'-2+3"},
		{"@SUM(1)", "'@SUM(1)"},
		{"\tcmd", "'\tcmd"},
		{"\rcmd", "'\rcmd"},
		{"-1", "-1"},
		{"-0.5", "-0.5"},
		{"12", "12"},
		{"1.2500", "1.2500"},
		{"-Inf", "'-Inf"},
		{"+5", "'+5"},
		{"a=b", "a=b"},
	} {
		if got := csvCell(tc.in); got != tc.want {
			t.Errorf("csvCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzCSVCell: whatever a cell holds, read back from the CSV it is the
// value or the value behind one quote, and it starts with no formula
// character unless it is a plain number.
func FuzzCSVCell(f *testing.F) {
	for _, s := range []string{"=1+1", "+1", "-1", "@A1", "\t=1", "\r=1", "a\nb", `"=1"`, "-0.5", "'=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		cw := csv.NewWriter(&b)
		if err := writeCSVRow(cw, []string{s, "x"}); err != nil {
			t.Skip() // invalid UTF-8 the csv package refuses
		}
		cw.Flush()
		rec, err := csv.NewReader(&b).Read()
		if err != nil {
			t.Fatalf("read back %q: %v", b.String(), err)
		}
		got := rec[0]
		// The csv package turns \r\n inside a quoted field into \n.
		want := strings.ReplaceAll(s, "\r\n", "\n")
		if got != want && got != "'"+want {
			t.Fatalf("cell %q read back as %q", s, got)
		}
		if got != "" && strings.ContainsRune("=+-@\t\r", rune(got[0])) && !plainNumber.MatchString(got) {
			t.Fatalf("cell %q starts with a formula character: %q", s, got)
		}
	})
}

// TestJobsReportHostileNames (N6): a jobs report's CSV neutralises names
// and reasons a spreadsheet would run; its table escapes control
// characters.
func TestJobsReportHostileNames(t *testing.T) {
	exit := -1
	end := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	jobs := []api.Job{
		{ID: "1.c", Name: `=HYPERLINK("http://evil","x")`, Owner: api.Owner{User: "mallory"}, Share: "a", Reason: "+1+1", EndTime: end, ExitStatus: &exit},
		{ID: "2.c", Name: "@SUM(1)", Owner: api.Owner{User: "mallory"}, Share: "-a", EndTime: end},
		{ID: "3.c", Name: "a\x1b[2Jb\nforged", Owner: api.Owner{User: "mallory"}, Share: "a", EndTime: end},
	}
	var b bytes.Buffer
	if err := writeJobsCSV(&b, jobs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		for i, c := range jobColumns {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	for _, c := range []struct {
		row  int
		col  string
		want string
	}{
		{1, "name", `'=HYPERLINK("http://evil","x")`},
		{1, "reason", "'+1+1"},
		{1, "exit_status", "-1"},
		{2, "name", "'@SUM(1)"},
		{2, "share", "'-a"},
	} {
		if got := recs[c.row][col(c.col)]; got != c.want {
			t.Errorf("row %d %s = %q, want %q", c.row, c.col, got, c.want)
		}
	}
	b.Reset()
	if err := writeJobsReport(&b, jobs, &Sys{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\x1b") || strings.Contains(b.String(), "\nforged") {
		t.Fatalf("table carries control characters:\n%q", b.String())
	}
}
