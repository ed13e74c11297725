// Command pause is the sandbox ("infra") container of the real node's pods.
//
// It holds the pod's namespaces while the pod lives, reaps children that are
// re-parented to it, and exits cleanly on SIGTERM or SIGINT.  No registry is
// reachable from these machines, so the node cannot pull the usual pause
// image; this is built from source with the other node tools instead.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
