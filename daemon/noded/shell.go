package noded

import (
	"fmt"
	"path/filepath"
	"strings"
)

// defaultShell runs a script with neither qsub -S nor a #! line.
const defaultShell = "/bin/sh"

// maxShebang is the longest #! line honoured, as Linux reads it.
const maxShebang = 256

// scriptArgs is the command line that runs the script file at path, as PBS
// runs it: with shell (qsub -S) when given, else with the interpreter of
// the script's #! line (and its one optional argument, as the kernel
// passes it), else with /bin/sh.
func scriptArgs(script, shell, path string) ([]string, error) {
	if shell != "" {
		if !filepath.IsAbs(shell) || strings.ContainsAny(shell, "\x00\n") {
			return nil, fmt.Errorf("%w: shell %q is not an absolute path", ErrBadOrder, shell)
		}
		return []string{shell, path}, nil
	}
	line, ok := strings.CutPrefix(script, "#!")
	if !ok {
		return []string{defaultShell, path}, nil
	}
	line, _, _ = strings.Cut(line, "\n")
	if len(line) > maxShebang {
		return nil, fmt.Errorf("%w: the script's #! line is longer than %d bytes", ErrBadOrder, maxShebang)
	}
	line = strings.Trim(strings.TrimSuffix(line, "\r"), " \t")
	interp, arg, _ := strings.Cut(line, " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	arg = strings.Trim(arg, " \t")
	switch {
	case interp == "":
		return []string{defaultShell, path}, nil
	case !filepath.IsAbs(interp):
		return nil, fmt.Errorf("%w: the script's #! interpreter %q is not an absolute path", ErrBadOrder, interp)
	case arg == "":
		return []string{interp, path}, nil
	}
	return []string{interp, arg, path}, nil
}
