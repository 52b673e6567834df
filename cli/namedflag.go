package cli

import ucli "github.com/urfave/cli/v2"

// namedGeneric and namedBool are a GenericFlag and a BoolFlag whose names
// are computed once. urfave/cli v2
// recomputes a flag's names (with a regular expression) at every lookup,
// and after parsing it looks every flag up by every name to run the
// actions of those that were set: quadratic in the number of flags, about
// 5 % of a qsub process's CPU with qsub's 31 options. Every other method
// is the flag's own, so parsing and help read the same (help formats a
// flag through its own String, where the bool flag is still a
// *ucli.BoolFlag).
type namedGeneric struct {
	*ucli.GenericFlag
	names []string
}

// Names returns the names computed when the flag was made.
func (f namedGeneric) Names() []string { return f.names }

type namedBool struct {
	*ucli.BoolFlag
	names []string
}

// Names returns the names computed when the flag was made.
func (f namedBool) Names() []string { return f.names }
