package etcdtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

// MemberEnv carries a MemberConfig (JSON) to a member process.
const MemberEnv = "SHARQ_ETCD_MEMBER"

// MemberProcessEnv is the environment entry that makes a test binary run as
// the member mc (see RunMemberFromEnv): tests start their own binary
// (os.Args[0]) with it to get etcd members they can kill -9.
func MemberProcessEnv(mc MemberConfig) string {
	b, _ := json.Marshal(mc)
	return MemberEnv + "=" + string(b)
}

// RunMemberFromEnv runs an etcd member when the process was started with
// MemberProcessEnv, until SIGTERM, and then exits; otherwise it returns at
// once. Call it first in TestMain.
func RunMemberFromEnv() {
	v := os.Getenv(MemberEnv)
	if v == "" {
		return
	}
	os.Exit(runMember(v))
}

func runMember(v string) int {
	var mc MemberConfig
	if err := json.Unmarshal([]byte(v), &mc); err != nil {
		fmt.Fprintln(os.Stderr, "etcd member:", err)
		return 2
	}
	cfg, err := Config(mc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd member:", err)
		return 2
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd member:", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-sig:
	case err := <-e.Err():
		fmt.Fprintln(os.Stderr, "etcd member:", err)
	}
	e.Close()
	return 0
}
