package cli

import (
	"encoding/csv"
	"regexp"
)

// plainNumber is a cell a spreadsheet reads as a number and nothing else.
var plainNumber = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// csvCell neutralises a cell a spreadsheet would run as a formula (CSV
// injection, as OWASP describes it): one that starts with =, +, -, @, a
// tab or a carriage return gets a leading single quote, which spreadsheets
// read as "text". Plain numbers (a negative one too) are left alone. Job
// names, users, shares and reasons come from users: a name such as
// =HYPERLINK(...) must reach the admin's spreadsheet as text.
func csvCell(s string) string {
	if s == "" || plainNumber.MatchString(s) {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// writeCSVRow writes one row of an export, every cell neutralised.
func writeCSVRow(cw *csv.Writer, cells []string) error {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = csvCell(c)
	}
	return cw.Write(out)
}
