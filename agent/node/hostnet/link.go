package hostnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// WaitLink returns once a link called name exists, or with ctx's error. ovs-vswitchd creates
// an internal port's (and a bridge's) kernel interface some time after its row is committed.
func WaitLink(ctx context.Context, name string) error {
	updates := make(chan netlink.LinkUpdate, 8)
	done := make(chan struct{})
	if err := netlink.LinkSubscribe(updates, done); err != nil {
		return fmt.Errorf("subscribe to link events to wait for %s: %w", name, err)
	}
	defer func() {
		close(done)
		for range updates { // the subscriber closes it once its socket is closed
		}
	}()
	// The link may have appeared before the subscription started.
	if found, err := linkExists(name); found || err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for interface %s to be created by ovs-vswitchd: %w", name, ctx.Err())
		case u, ok := <-updates:
			if !ok {
				return fmt.Errorf("wait for interface %s: link event subscription ended", name)
			}
			if u.Header.Type == unix.RTM_NEWLINK && u.Link.Attrs().Name == name {
				return nil
			}
		}
	}
}

func linkExists(name string) (bool, error) {
	_, err := netlinksafe.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &notFound):
		return false, nil
	}
	return false, fmt.Errorf("look up interface %s: %w", name, err)
}

// configureLink sets the link's MAC and MTU where they differ and brings it up.
func configureLink(_ context.Context, spec Spec, log *slog.Logger) error {
	link, err := netlinksafe.LinkByName(spec.Interface)
	if err != nil {
		return fmt.Errorf("look up interface %s: %w", spec.Interface, err)
	}
	attrs := link.Attrs()
	if !bytes.Equal(attrs.HardwareAddr, spec.MAC) {
		if err := netlink.LinkSetHardwareAddr(link, spec.MAC); err != nil {
			return fmt.Errorf("set mac %s on %s: %w", spec.MAC, spec.Interface, err)
		}
		log.Info("set host interface mac", "mac", spec.MAC.String())
	}
	if spec.MTU > 0 && attrs.MTU != spec.MTU {
		if err := netlink.LinkSetMTU(link, spec.MTU); err != nil {
			return fmt.Errorf("set mtu %d on %s: %w", spec.MTU, spec.Interface, err)
		}
		log.Info("set host interface mtu", "mtu", spec.MTU)
	}
	if attrs.Flags&unix.IFF_UP == 0 {
		if err := netlink.LinkSetUp(link); err != nil {
			return fmt.Errorf("set %s up: %w", spec.Interface, err)
		}
		log.Info("set host interface up")
	}
	return nil
}
