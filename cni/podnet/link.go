package podnet

import (
	"errors"
	"fmt"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// deleteLink deletes the link called name in the current namespace; a missing link is not an
// error. Deleting either end of a veth deletes both.
func deleteLink(name string) error {
	link, err := netlinksafe.LinkByName(name)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return nil
		}
		return fmt.Errorf("look up %s: %w", name, err)
	}
	// The kernel may destroy the pair between lookup and delete when the pod's namespace is
	// being torn down; that is the outcome we wanted.
	if err := netlink.LinkDel(link); err != nil && !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// deleteStalePodIf removes a veth called name from the pod's namespace, which only an earlier
// ADD for this pod can have made. Any other kind of link under that name is the runtime's
// and is reported rather than deleted.
func deleteStalePodIf(name string) error {
	link, err := netlinksafe.LinkByName(name)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return nil
		}
		return fmt.Errorf("look up %s: %w", name, err)
	}
	if link.Type() != "veth" {
		return fmt.Errorf("%s already exists as a %s link: %w", name, link.Type(), ErrInvalidRequest)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("delete stale %s: %w", name, err)
	}
	return nil
}
