package podnet

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"
)

func TestTeardownIsIdempotent(t *testing.T) {
	needRoot(t)
	hostNS, podNS := newNS(t), newNS(t)
	req := testRequest(podNS)
	ctx := context.Background()
	inNS(t, hostNS, func() error {
		if _, err := Setup(ctx, req); err != nil {
			return err
		}
		for i := range 2 {
			if err := Teardown(ctx, req.HostIfName, req.Netns); err != nil {
				t.Errorf("Teardown #%d: %v", i+1, err)
			}
		}
		if _, err := netlink.LinkByName(req.HostIfName); err == nil {
			t.Errorf("host link %s survived Teardown", req.HostIfName)
		}
		return nil
	})
	inNS(t, podNS, func() error {
		if _, err := netlink.LinkByName("eth0"); err == nil {
			t.Errorf("pod link eth0 survived Teardown")
		}
		return nil
	})
}

func TestTeardownWithNetnsGone(t *testing.T) {
	needRoot(t)
	hostNS := newNS(t)
	podNS, err := testutils.NewNS()
	if err != nil {
		t.Fatal(err)
	}
	req := testRequest(podNS)
	ctx := context.Background()
	inNS(t, hostNS, func() error {
		_, err := Setup(ctx, req)
		return err
	})
	if err := podNS.Close(); err != nil {
		t.Fatal(err)
	}
	if err := testutils.UnmountNS(podNS); err != nil {
		t.Fatal(err)
	}
	inNS(t, hostNS, func() error {
		if err := Teardown(ctx, req.HostIfName, req.Netns); err != nil {
			t.Errorf("Teardown with netns gone: %v", err)
		}
		if _, err := netlink.LinkByName(req.HostIfName); err == nil {
			t.Errorf("host link %s survived", req.HostIfName)
		}
		return nil
	})
}

func TestCheckReportsMismatch(t *testing.T) {
	needRoot(t)
	hostNS, podNS := newNS(t), newNS(t)
	req := testRequest(podNS)
	ctx := context.Background()
	inNS(t, hostNS, func() error {
		_, err := Setup(ctx, req)
		return err
	})
	check := CheckRequest{Netns: req.Netns, IfName: "eth0", HostIfName: req.HostIfName,
		IPs: []netip.Prefix{netip.MustParsePrefix("10.42.0.99/24")}}
	inNS(t, hostNS, func() error {
		if err := Check(ctx, check); !errors.Is(err, ErrMismatch) {
			t.Errorf("Check with a wrong address: %v, want ErrMismatch", err)
		}
		if err := Teardown(ctx, req.HostIfName, req.Netns); err != nil {
			return err
		}
		check.IPs = req.IPs
		if err := Check(ctx, check); !errors.Is(err, ErrMismatch) {
			t.Errorf("Check after Teardown: %v, want ErrMismatch", err)
		}
		return nil
	})
}
