// Command pause is the node's pod sandbox image: the process that holds a pod's namespaces.
//
// The CRI's sandbox image (containerd's pinned `sandbox`, registry.k8s.io/pause) is not on the GPU
// machine and it has no registry, so this stands in for it: as PID 1 of the sandbox it reaps the
// children that end up re-parented to it and exits on SIGINT or SIGTERM.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	children := make(chan os.Signal, 16)
	signal.Notify(children, syscall.SIGCHLD)
	for {
		select {
		case <-stop:
			return
		case <-children:
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
