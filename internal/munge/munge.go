package munge

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// DefaultSocket is munged's socket unless its --socket says otherwise.
const DefaultSocket = "/run/munge/munge.socket.2"

// MaxCredential bounds a credential Decode accepts (one with a payload of
// MaxPayload bytes is about 4/3 of it, plus a header); longer input is
// refused before it reaches munged.
const MaxCredential = 8 << 10

// MaxPayload bounds the payload Encode sends.
const MaxPayload = 4 << 10

// Credential is what Decode learned from a credential.
type Credential struct {
	UID, GID uint32
	Payload  []byte
	Encoded  time.Time     // when munged made it (its clock)
	TTL      time.Duration // how long it is good for
}

// Encode returns a credential for payload from the munged at socket ("" is
// DefaultSocket), valid for ttl (0: munged's default, 5 minutes; a
// fraction of a second counts as a whole one). It blocks until munged
// answers, ctx ends, or libmunge's timeouts and retries run out
// (xfer.go).
func Encode(ctx context.Context, socket string, payload []byte, ttl time.Duration) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("munge encode: %w", err)
	}
	if len(payload) > MaxPayload {
		return "", fmt.Errorf("munge encode: payload of %d bytes (at most %d): %w", len(payload), MaxPayload, ErrBadArg)
	}
	if ttl < 0 || ttl > 24*time.Hour {
		return "", fmt.Errorf("munge encode: ttl %v (0 to 24h): %w", ttl, ErrBadArg)
	}
	secs := uint32((ttl + time.Second - 1) / time.Second)
	socket = socketName(socket)
	rep, err := transact(ctx, socket, func(retry uint8) []byte { return encodeRequest(retry, payload, secs) }, msgEncRsp, parseEncodeReply)
	if err == nil {
		err = rep.err()
	}
	if err != nil {
		return "", fmt.Errorf("munge encode (socket %s): %w", socket, err)
	}
	return rep.cred, nil
}

// Decode checks cred with the munged at socket ("" is DefaultSocket). On
// ErrExpired, ErrRewound and ErrReplayed the Credential is filled in as
// well (who made it, when), for the log; it must not be trusted.
func Decode(ctx context.Context, socket, cred string) (Credential, error) {
	if err := ctx.Err(); err != nil {
		return Credential{}, fmt.Errorf("munge decode: %w", err)
	}
	if err := checkFormat(cred); err != nil {
		return Credential{}, fmt.Errorf("munge decode: %w", err)
	}
	socket = socketName(socket)
	rep, err := transact(ctx, socket, func(retry uint8) []byte { return decodeRequest(retry, cred) }, msgDecRsp, parseDecodeReply)
	if err != nil {
		return Credential{}, fmt.Errorf("munge decode (socket %s): %w", socket, err)
	}
	var c Credential
	switch rep.code {
	case codeSuccess, codeExpired, codeRewound, codeReplayed:
		// munged leaves what it decoded in these replies only.
		c = Credential{UID: rep.uid, GID: rep.gid, Payload: rep.payload,
			Encoded: time.Unix(int64(rep.encoded), 0), TTL: time.Duration(rep.ttl) * time.Second}
	}
	if err := rep.err(); err != nil {
		return c, fmt.Errorf("munge decode (socket %s): %w", socket, err)
	}
	return c, nil
}

// checkFormat refuses what cannot be a credential before munged sees it:
// too long, or not "MUNGE:" base64 ":" (a NUL would cut it short).
func checkFormat(cred string) error {
	if len(cred) > MaxCredential {
		return fmt.Errorf("credential of %d bytes (at most %d): %w", len(cred), MaxCredential, ErrBadCredential)
	}
	body, ok := strings.CutPrefix(cred, "MUNGE:")
	if !ok || !strings.HasSuffix(body, ":") {
		return fmt.Errorf("not a MUNGE credential (want MUNGE:...:): %w", ErrBadCredential)
	}
	for i := 0; i < len(body)-1; i++ {
		switch c := body[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '=':
		default:
			return fmt.Errorf("byte %#x at %d is not base64: %w", c, i+6, ErrBadCredential)
		}
	}
	return nil
}

func socketName(socket string) string {
	if socket == "" {
		return DefaultSocket
	}
	return socket
}
