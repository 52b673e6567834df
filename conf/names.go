package conf

// Name checks, hand-written: the regular expressions they replace
// (^[A-Za-z0-9][A-Za-z0-9_.-]{0,252}$ and the like) compiled to programs of
// hundreds of kilobytes at every process start, including every qsub's.

// validName is what partition and share names look like: 1 to 63 of
// [A-Za-z0-9_.-], starting with a letter or digit.
func validName(s string) bool { return validWord(s, 63, "_.-", false) }

// validHost is what node names look like: 1 to 253 of [A-Za-z0-9_.-],
// starting with a letter or digit.
func validHost(s string) bool { return validWord(s, 253, "_.-", false) }

// validClusterName is what cluster names look like: 1 to 63 of [a-z0-9-],
// starting with a letter or digit.
func validClusterName(s string) bool { return validWord(s, 63, "-", true) }

// validWord says whether s has 1 to max bytes, each a letter, a digit or one
// of extra (not first), letters lower case only when lower is set.
func validWord(s string, max int, extra string, lower bool) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z':
		case c >= 'A' && c <= 'Z' && !lower:
		case i > 0 && indexByte(extra, c):
		default:
			return false
		}
	}
	return true
}

func indexByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}
