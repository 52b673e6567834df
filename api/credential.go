package api

import (
	"crypto/sha256"
	"encoding/hex"
)

// Credential is the line a client sends before each Request on the
// controller's TCP client port: a MUNGE credential from the client host's
// munged whose payload is RequestPayload of the request line that follows,
// byte for byte (newline included). The controller decodes it with its own
// munged: the uid and gid in it are the caller's, a credential made for
// another request (or with the request changed on the way) does not match
// the digest, and munged refuses a second use.
type Credential struct {
	V     int    `json:"v"`
	Munge string `json:"munge"`
}

// MaxCredentialLine bounds the Credential line (a credential with
// RequestPayload is about 200 bytes).
const MaxCredentialLine = 16 << 10

// payloadTag starts every request payload: a credential made by another
// program (for Slurm, say) carries some other payload and is refused.
const payloadTag = "sharq-request-v1 sha256:"

// RequestPayload is the MUNGE payload that binds a credential to the
// request line line.
func RequestPayload(line []byte) []byte {
	sum := sha256.Sum256(line)
	out := make([]byte, 0, len(payloadTag)+2*len(sum))
	out = append(out, payloadTag...)
	return hex.AppendEncode(out, sum[:])
}

// Codes of requests refused on the TCP client port.
const (
	// CodeAuth: the credential is missing, malformed, expired, replayed,
	// made with another key, or for another request.
	CodeAuth = "authentication_failed"
)
