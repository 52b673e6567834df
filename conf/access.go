package conf

import "strings"

// checkPrincipal says what is wrong with a users or admins entry, or "".
func checkPrincipal(e string, wildcard bool) string {
	if e == "*" {
		if wildcard {
			return ""
		}
		return `"*" is not allowed here; name users or @groups`
	}
	name, kind := e, "user"
	if strings.HasPrefix(e, "@") {
		name, kind = e[1:], "group"
	}
	if !validUnixName(name) {
		return "bad " + kind + " name " + quote(e) + " (want [A-Za-z_][A-Za-z0-9_.-]*)"
	}
	return ""
}

// validUnixName accepts portable user and group names (as useradd does,
// with upper case allowed): [A-Za-z_][A-Za-z0-9_.-]* with an optional
// trailing '$', at most 32 bytes.
func validUnixName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	s = strings.TrimSuffix(s, "$")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}
