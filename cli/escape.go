package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// printable makes s safe to show on a terminal: control characters (C0,
// DEL, C1: newlines and escape sequences included) and invalid UTF-8 are
// written as Go escapes (\n, \x1b, \u009b). The controller refuses such
// strings in names and paths, but records written before it did, and
// values it allows (environment variables), are escaped here too, so that
// no job's strings can forge lines of qstat's output or drive another
// user's terminal.
func printable(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}
