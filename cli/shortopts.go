package cli

import "strings"

// splitAttached rewrites PBS's attached option values (-Nname, -joe,
// -lwalltime=1:00:00) into separate words (-N name), as getopt would read
// them; Go's flag package would take "-Nname" for an option named Nname.
// valueOpts are the options that take a value; boolOpts those that do not.
// It stops at the first operand or at "--".
func splitAttached(args []string, valueOpts, boolOpts map[string]bool) []string {
	out := make([]string, 0, len(args)+2)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...)
		}
		name := strings.TrimLeft(a, "-")
		base, _, hasEq := strings.Cut(name, "=")
		switch {
		case valueOpts[base]:
			out = append(out, a)
			if !hasEq && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		case boolOpts[base]:
			out = append(out, a)
		case !strings.HasPrefix(a, "--") && len(name) > 1 && valueOpts[name[:1]]:
			out = append(out, "-"+name[:1], name[1:])
		default:
			out = append(out, a) // unknown: let the parser complain
		}
	}
	return out
}
