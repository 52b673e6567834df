package munge

/*
#cgo LDFLAGS: -lmunge
#include <stdlib.h>
#include <string.h>
#include <munge.h>

// sharq_encode creates a credential with payload buf, from the munged at
// socket (NULL: libmunge's default) with the given ttl (0: munged's).
static munge_err_t sharq_encode(const char *socket, int ttl, const void *buf, int len,
		char **cred, char **msg) {
	munge_ctx_t ctx = munge_ctx_create();
	munge_err_t e;
	*cred = NULL;
	*msg = NULL;
	if (ctx == NULL)
		return EMUNGE_NO_MEMORY;
	if (socket != NULL && (e = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket)) != EMUNGE_SUCCESS)
		goto out;
	if (ttl > 0 && (e = munge_ctx_set(ctx, MUNGE_OPT_TTL, ttl)) != EMUNGE_SUCCESS)
		goto out;
	e = munge_encode(cred, ctx, buf, len);
out:
	if (e != EMUNGE_SUCCESS) {
		const char *m = munge_ctx_strerror(ctx);
		if (m != NULL)
			*msg = strdup(m);
	}
	munge_ctx_destroy(ctx);
	return e;
}

// sharq_decode checks cred with the munged at socket. On the errors for
// which libmunge still fills them (expired, rewound, replayed), uid, gid,
// payload and times are set too.
static munge_err_t sharq_decode(const char *socket, const char *cred,
		void **buf, int *len, uid_t *uid, gid_t *gid, time_t *encoded, int *ttl, char **msg) {
	munge_ctx_t ctx = munge_ctx_create();
	munge_err_t e;
	*buf = NULL;
	*len = 0;
	*msg = NULL;
	*encoded = 0;
	*ttl = 0;
	if (ctx == NULL)
		return EMUNGE_NO_MEMORY;
	if (socket != NULL && (e = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket)) != EMUNGE_SUCCESS)
		goto out;
	e = munge_decode(cred, ctx, buf, len, uid, gid);
	munge_ctx_get(ctx, MUNGE_OPT_ENCODE_TIME, encoded);
	munge_ctx_get(ctx, MUNGE_OPT_TTL, ttl);
out:
	if (e != EMUNGE_SUCCESS) {
		const char *m = munge_ctx_strerror(ctx);
		if (m != NULL)
			*msg = strdup(m);
	}
	munge_ctx_destroy(ctx);
	return e;
}
*/
import "C"

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unsafe"
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
// DefaultSocket), valid for ttl (0: munged's default, 5 minutes). It
// blocks until munged answers; ctx is checked before the call (libmunge
// has its own timeout and retries).
func Encode(ctx context.Context, socket string, payload []byte, ttl time.Duration) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("munge encode: %w", err)
	}
	if len(payload) > MaxPayload {
		return "", fmt.Errorf("munge encode: payload of %d bytes: %w", len(payload), ErrBadArg)
	}
	if ttl < 0 || ttl > 24*time.Hour {
		return "", fmt.Errorf("munge encode: ttl %v: %w", ttl, ErrBadArg)
	}
	csock := cSocket(socket)
	defer C.free(unsafe.Pointer(csock))
	var buf unsafe.Pointer
	if len(payload) > 0 {
		buf = C.CBytes(payload)
		defer C.free(buf)
	}
	var cred, msg *C.char
	e := C.sharq_encode(csock, C.int(ttl/time.Second), buf, C.int(len(payload)), &cred, &msg)
	defer C.free(unsafe.Pointer(cred))
	if err := mungeErr(e, msg); err != nil {
		return "", fmt.Errorf("munge encode (socket %s): %w", socketName(socket), err)
	}
	return C.GoString(cred), nil
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
	csock := cSocket(socket)
	defer C.free(unsafe.Pointer(csock))
	ccred := C.CString(cred)
	defer C.free(unsafe.Pointer(ccred))
	var (
		buf     unsafe.Pointer
		n       C.int
		uid     C.uid_t
		gid     C.gid_t
		encoded C.time_t
		ttl     C.int
		msg     *C.char
	)
	e := C.sharq_decode(csock, ccred, &buf, &n, &uid, &gid, &encoded, &ttl, &msg)
	defer C.free(buf)
	c := Credential{UID: uint32(uid), GID: uint32(gid), Encoded: time.Unix(int64(encoded), 0), TTL: time.Duration(ttl) * time.Second}
	if buf != nil && n > 0 {
		c.Payload = C.GoBytes(buf, n)
	}
	if err := mungeErr(e, msg); err != nil {
		return c, fmt.Errorf("munge decode (socket %s): %w", socketName(socket), err)
	}
	return c, nil
}

// checkFormat refuses what cannot be a credential before libmunge sees
// it: too long, or not "MUNGE:" base64 ":" (a NUL would cut it short).
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

func cSocket(socket string) *C.char {
	if socket == "" {
		return nil
	}
	return C.CString(socket)
}

func socketName(socket string) string {
	if socket == "" {
		return DefaultSocket
	}
	return socket
}
