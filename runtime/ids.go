package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxIDPrefix keeps ContainerID within containerd's 76-byte identifier
// limit: prefix, "-", 12 hex digits.
const maxIDPrefix = 76 - 1 - 12

// ContainerID is the containerd container id of job on node: a readable
// part (node and job with every character containerd refuses turned into
// '-') and a hash of the exact pair, so distinct pairs never collide
// ("12[3].lab" on "n1" -> "n1.12-3.lab-<hash>"). It always matches
// containerd's identifier rule [A-Za-z0-9]+([._-][A-Za-z0-9]+)*.
func ContainerID(node, jobID string) string {
	sum := sha256.Sum256([]byte(node + "\x00" + jobID))
	prefix := idPart(node + "." + jobID)
	if len(prefix) > maxIDPrefix {
		prefix = strings.TrimRight(prefix[:maxIDPrefix], "._-")
	}
	h := hex.EncodeToString(sum[:6])
	if prefix == "" {
		return "j-" + h
	}
	return prefix + "-" + h
}

// idPart maps s to alphanumerics separated by single '.', '_' or '-'.
func idPart(s string) string {
	var b strings.Builder
	sep := byte(0) // separator waiting for the next alphanumeric
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			if sep != 0 && b.Len() > 0 {
				b.WriteByte(sep)
			}
			sep = 0
			b.WriteByte(c)
		case c == '.' || c == '_':
			sep = c // kept in preference to a '-' for other characters
		default:
			sep = '-'
		}
	}
	return b.String()
}
