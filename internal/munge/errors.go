package munge

/*
#include <stdlib.h>
#include <munge.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// The causes a caller branches on; every error of Encode and Decode wraps
// one of them (errors.Is) together with munged's own message.
var (
	// ErrSocket: munged does not answer at the socket (not running, or
	// the path is wrong).
	ErrSocket = errors.New("cannot talk to munged")
	// ErrBadCredential: the text is not a credential at all.
	ErrBadCredential = errors.New("malformed credential")
	// ErrInvalid: munged cannot authenticate it: made with another key,
	// or changed after it was made.
	ErrInvalid = errors.New("invalid credential (another munge key, or altered)")
	// ErrExpired: older than its time-to-live (or the hosts' clocks
	// differ by more).
	ErrExpired = errors.New("expired credential")
	// ErrRewound: made in the future by this munged's clock.
	ErrRewound = errors.New("credential from the future (clocks differ)")
	// ErrReplayed: munged has decoded this credential before.
	ErrReplayed = errors.New("replayed credential (each one is good for one use)")
	// ErrUnauthorized: the credential is restricted to another uid or gid.
	ErrUnauthorized = errors.New("credential not for this decoder")
	// ErrBadArg: a bad argument (payload too large, ttl out of range).
	ErrBadArg = errors.New("bad argument")
	// ErrMunge: any other failure libmunge reports.
	ErrMunge = errors.New("munge failure")
)

// mungeErr maps a munge_err_t to its sentinel, with munged's message (msg
// is freed here).
func mungeErr(e C.munge_err_t, msg *C.char) error {
	detail := ""
	if msg != nil {
		detail = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	if e == C.EMUNGE_SUCCESS {
		return nil
	}
	var base error
	switch e {
	case C.EMUNGE_SOCKET, C.EMUNGE_TIMEOUT:
		base = ErrSocket
	case C.EMUNGE_BAD_CRED, C.EMUNGE_BAD_VERSION, C.EMUNGE_BAD_CIPHER, C.EMUNGE_BAD_MAC, C.EMUNGE_BAD_ZIP, C.EMUNGE_BAD_REALM:
		base = ErrBadCredential
	case C.EMUNGE_CRED_INVALID:
		base = ErrInvalid
	case C.EMUNGE_CRED_EXPIRED:
		base = ErrExpired
	case C.EMUNGE_CRED_REWOUND:
		base = ErrRewound
	case C.EMUNGE_CRED_REPLAYED:
		base = ErrReplayed
	case C.EMUNGE_CRED_UNAUTHORIZED:
		base = ErrUnauthorized
	case C.EMUNGE_BAD_ARG, C.EMUNGE_BAD_LENGTH:
		base = ErrBadArg
	default:
		base = ErrMunge
	}
	if detail == "" {
		detail = C.GoString(C.munge_strerror(e))
	}
	return fmt.Errorf("%w: %s", base, detail)
}
