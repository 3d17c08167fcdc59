// Command netaddr puts an address on a network device or takes it off, and deletes a device, over netlink.
//
// node.py gives the node and the API server's Service address their homes on the loopback device and removes
// the CNI bridge of an earlier run; the GPU machine's image may lack iproute2's `ip`, so this does the three
// things it would do there.
//
//	netaddr add 10.99.0.1/32 lo | netaddr del 10.99.0.1/32 lo | netaddr link-del cni0
package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/vishvananda/netlink"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "netaddr:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 3 && (args[0] == "add" || args[0] == "del"):
		link, err := netlink.LinkByName(args[2])
		if err != nil {
			return fmt.Errorf("device %s: %w", args[2], err)
		}
		addr, err := netlink.ParseAddr(args[1])
		if err != nil {
			return err
		}
		if args[0] == "add" {
			if err := netlink.AddrReplace(link, addr); err != nil {
				return fmt.Errorf("add %s to %s: %w", args[1], args[2], err)
			}
			return nil
		}
		if err := netlink.AddrDel(link, addr); err != nil && !errors.Is(err, syscall.EADDRNOTAVAIL) {
			return fmt.Errorf("delete %s from %s: %w", args[1], args[2], err)
		}
		return nil
	case len(args) == 2 && args[0] == "link-del":
		link, err := netlink.LinkByName(args[1])
		if err != nil {
			var notFound netlink.LinkNotFoundError
			if errors.As(err, &notFound) {
				return nil
			}
			return err
		}
		return netlink.LinkDel(link)
	}
	return errors.New("usage: netaddr add|del ADDR/PREFIX DEVICE | netaddr link-del DEVICE")
}
