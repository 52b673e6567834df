package session

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Version is the session protocol's version (Hello.V).
const Version = 1

// Hello opens a session: the token the controller issued for it, the
// client's MUNGE credential binding that token (when the token was issued
// to a MUNGE-authenticated client), and the terminal it has.
type Hello struct {
	V     int    `json:"v"`
	Token string `json:"token"`
	Munge string `json:"munge,omitempty"`
	// TTY: the client's stdin is a terminal in raw mode; the process gets
	// a terminal of Rows x Cols and TERM=Term.
	TTY  bool   `json:"tty,omitempty"`
	Rows uint16 `json:"rows,omitempty"`
	Cols uint16 `json:"cols,omitempty"`
	Term string `json:"term,omitempty"`
}

// Check bounds what a Hello holds.
func (h *Hello) Check() error {
	switch {
	case h.V != Version:
		return fmt.Errorf("%w: session protocol version %d, this node speaks %d", ErrFrame, h.V, Version)
	case len(h.Token) != TokenLen:
		return fmt.Errorf("%w: malformed token", ErrFrame)
	case len(h.Term) > 64 || strings.ContainsFunc(h.Term, func(r rune) bool { return r <= ' ' || r > '~' }):
		return fmt.Errorf("%w: TERM %.64q", ErrFrame, h.Term)
	}
	return nil
}

// Ready says the session's process runs.
type Ready struct {
	Job  string   `json:"job"`
	Node string   `json:"node"`
	Args []string `json:"args"`
}

// Exit ends a session: the process's exit status (0-255; 128+N for a
// death by signal N; -1 when it is unknown) and, when the session ended
// for another reason than the process's own exit, why.
type Exit struct {
	Status int    `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// TokenLen is the length of a token's text: 32 random bytes in hex.
const TokenLen = 64

// payloadTag starts a session credential's payload.
const payloadTag = "sharq-session-v1 sha256:"

// CredentialPayload is the MUNGE payload that binds a credential to token.
func CredentialPayload(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return hex.AppendEncode([]byte(payloadTag), sum[:])
}
