package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// PBS's commands read their options with getopt(3): single-letter options
// combine (qstat -fx, qstat -an1), and an option's value may be attached
// (-Nname, -koe, -lwalltime=1:00:00). Go's flag package, under urfave,
// takes "-fx" for one option named fx. getoptWords rewrites such words
// into the separate words flag reads; every command runs its arguments
// through it first.

// getoptWords rewrites args (without the command name) as getopt would
// read them, up to the first operand or "--": those and everything after
// them are left as they are (a script's or command's own arguments).
// valueOpts are the options that take a value, boolOpts those that do not.
func getoptWords(args []string, valueOpts, boolOpts map[string]bool) []string {
	out := make([]string, 0, len(args)+2)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...)
		}
		words, wantsValue := getoptWord(a, valueOpts, boolOpts)
		out = append(out, words...)
		if wantsValue && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// getoptWord rewrites one option word: a known option name (-f, -image,
// --since=7d) stays as it is; otherwise a word of single-letter options is
// split into one word per option, an option that takes a value taking the
// rest of the word as its value (-an1: -a -n -1; -koe: -k oe). wantsValue
// says the last option still waits for its value in the next word. A word
// with an unknown letter before any value option is left whole, for the
// parser to name as it was written.
func getoptWord(a string, valueOpts, boolOpts map[string]bool) (words []string, wantsValue bool) {
	name := strings.TrimLeft(a, "-")
	base, _, hasEq := strings.Cut(name, "=")
	switch {
	case valueOpts[base]:
		return []string{a}, !hasEq
	case boolOpts[base] || !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") || name == "":
		return []string{a}, false
	}
	for i := 0; i < len(name); i++ {
		c := name[i : i+1]
		switch {
		case boolOpts[c]:
			words = append(words, "-"+c)
		case valueOpts[c]:
			words = append(words, "-"+c)
			if rest := name[i+1:]; rest != "" {
				return append(words, rest), false
			}
			return words, true
		default:
			return []string{a}, false
		}
	}
	return words, false
}

// flagKinds tells the options that take a value from those that do not.
func flagKinds(flags []ucli.Flag) (value, boolean map[string]bool) {
	value, boolean = map[string]bool{}, map[string]bool{}
	for _, f := range flags {
		isBool := false
		switch f.(type) {
		case namedBool, *ucli.BoolFlag:
			isBool = true
		}
		for _, n := range f.Names() {
			if isBool {
				boolean[n] = true
			} else {
				value[n] = true
			}
		}
	}
	return value, boolean
}
