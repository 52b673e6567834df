package cli

import ucli "github.com/urfave/cli/v2"

// namedGeneric is a GenericFlag whose names are computed once. urfave/cli v2
// recomputes a flag's names (with a regular expression) at every lookup,
// and after parsing it looks every flag up by every name to run the
// actions of those that were set: quadratic in the number of flags, about
// 5 % of a qsub process's CPU with qsub's 31 options. Every other method
// is GenericFlag's, so parsing and help read the same. (Bool flags stay
// *ucli.BoolFlag: urfave's help type-checks them.)
type namedGeneric struct {
	*ucli.GenericFlag
	names []string
}

// Names returns the names computed when the flag was made.
func (f namedGeneric) Names() []string { return f.names }
