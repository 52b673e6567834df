package api

import (
	"fmt"
	"strconv"
	"strings"
)

// Signal is a signal that qsig may send to a running job's processes
// (Request.Signal, SignalOrder.Signal): a canonical name, "SIGUSR1". The
// wire carries names, not numbers, so that no peer reads another's
// numbering; ParseSignal makes one from what a user types.
type Signal string

// signalNumbers are the signals qsig sends, with their Linux numbers.
// The stop signals (STOP, TSTP, TTIN, TTOU) are not among them: a stopped
// job would keep its GPUs while doing nothing, which is PBS's suspend, and
// sharq does not suspend jobs.
var signalNumbers = map[Signal]int{
	"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6,
	"SIGBUS": 7, "SIGFPE": 8, "SIGKILL": 9, "SIGUSR1": 10, "SIGSEGV": 11, "SIGUSR2": 12,
	"SIGPIPE": 13, "SIGALRM": 14, "SIGTERM": 15, "SIGCHLD": 17, "SIGCONT": 18,
	"SIGURG": 23, "SIGXCPU": 24, "SIGXFSZ": 25, "SIGVTALRM": 26, "SIGPROF": 27,
	"SIGWINCH": 28, "SIGIO": 29, "SIGPWR": 30, "SIGSYS": 31,
}

// stopSignals are refused with their own reason (see signalNumbers).
var stopSignals = map[string]int{"SIGSTOP": 19, "SIGTSTP": 20, "SIGTTIN": 21, "SIGTTOU": 22}

// ErrSuspend is the reason ParseSignal refuses PBS's suspend and resume
// and the stop signals.
const ErrSuspend = "sharq does not suspend jobs (a suspended job would keep its GPUs): use qhold on queued jobs, or qrerun to put a running one back in the queue"

// ParseSignal reads a signal as qsig -s takes it: a name with or without
// SIG, in any case (TERM, SIGusr1), or a number (15). PBS's suspend,
// resume, admin-suspend and admin-resume are refused, as are the stop
// signals and anything unknown.
func ParseSignal(s string) (Signal, error) {
	if len(s) > 16 {
		return "", fmt.Errorf("unknown signal %.16q (longer than any signal name)", s)
	}
	switch strings.ToLower(s) {
	case "suspend", "resume", "admin-suspend", "admin-resume":
		return "", fmt.Errorf("signal %s: %s", s, ErrSuspend)
	}
	if n, err := strconv.Atoi(s); err == nil {
		for name, num := range signalNumbers {
			if num == n {
				return name, nil
			}
		}
		for name, num := range stopSignals {
			if num == n {
				return "", fmt.Errorf("signal %s (%s): %s", s, name, ErrSuspend)
			}
		}
		return "", fmt.Errorf("unknown signal %s", s)
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if _, ok := stopSignals[name]; ok {
		return "", fmt.Errorf("signal %s: %s", s, ErrSuspend)
	}
	if _, ok := signalNumbers[Signal(name)]; !ok {
		return "", fmt.Errorf("unknown signal %q", s)
	}
	return Signal(name), nil
}

// Number is the signal's Linux number, 0 for a Signal ParseSignal would
// not make.
func (s Signal) Number() int { return signalNumbers[s] }

// UnmarshalText accepts only canonical names of signals qsig may send, so a
// node never delivers a signal the controller would have refused.
func (s *Signal) UnmarshalText(b []byte) error {
	v := Signal(b)
	if v != "" && signalNumbers[v] == 0 {
		return fmt.Errorf("signal %.20q is not one qsig sends", b)
	}
	*s = v
	return nil
}
