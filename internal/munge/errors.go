package munge

import (
	"errors"
	"fmt"
)

// The causes a caller branches on; every error of Encode and Decode wraps
// one of them (errors.Is) together with munged's own message.
var (
	// ErrSocket: munged does not answer at the socket (not running, or
	// the path is wrong), or what answers does not speak its protocol.
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
	// ErrMunge: any other failure munged reports.
	ErrMunge = errors.New("munge failure")
)

// munged's error numbers (munge_err_t in munge.h).
const (
	codeSuccess      = 0
	codeSnafu        = 1
	codeBadArg       = 2
	codeBadLength    = 3
	codeOverflow     = 4
	codeNoMemory     = 5
	codeSocket       = 6
	codeTimeout      = 7
	codeBadCred      = 8
	codeBadVersion   = 9
	codeBadCipher    = 10
	codeBadMAC       = 11
	codeBadZip       = 12
	codeBadRealm     = 13
	codeInvalid      = 14
	codeExpired      = 15
	codeRewound      = 16
	codeReplayed     = 17
	codeUnauthorized = 18
)

// codeText is munge_strerror's text for each number.
var codeText = [...]string{
	codeSuccess:      "Success",
	codeSnafu:        "Internal error",
	codeBadArg:       "Invalid argument",
	codeBadLength:    "Exceeded maximum message length",
	codeOverflow:     "Buffer overflow",
	codeNoMemory:     "Out of memory",
	codeSocket:       "Socket communication error",
	codeTimeout:      "Socket timeout",
	codeBadCred:      "Invalid credential format",
	codeBadVersion:   "Invalid credential version",
	codeBadCipher:    "Invalid cipher type",
	codeBadMAC:       "Invalid MAC type",
	codeBadZip:       "Invalid compression type",
	codeBadRealm:     "Unrecognized security realm",
	codeInvalid:      "Invalid credential",
	codeExpired:      "Expired credential",
	codeRewound:      "Rewound credential",
	codeReplayed:     "Replayed credential",
	codeUnauthorized: "Unauthorized credential",
}

// codeErr maps munged's error number to its cause, with munged's message
// (or munge_strerror's text when it sent none); nil for success.
func codeErr(code uint8, msg string) error {
	var base error
	switch code {
	case codeSuccess:
		return nil
	case codeSocket, codeTimeout:
		base = ErrSocket
	case codeBadCred, codeBadVersion, codeBadCipher, codeBadMAC, codeBadZip, codeBadRealm:
		base = ErrBadCredential
	case codeInvalid:
		base = ErrInvalid
	case codeExpired:
		base = ErrExpired
	case codeRewound:
		base = ErrRewound
	case codeReplayed:
		base = ErrReplayed
	case codeUnauthorized:
		base = ErrUnauthorized
	case codeBadArg, codeBadLength:
		base = ErrBadArg
	default:
		base = ErrMunge
	}
	if msg == "" {
		if int(code) < len(codeText) {
			msg = codeText[code]
		} else {
			msg = fmt.Sprintf("unknown error %d", code)
		}
	}
	return fmt.Errorf("%w: %s", base, msg)
}
