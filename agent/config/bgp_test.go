package config

import (
	"flag"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestBGPFlags(t *testing.T) {
	c := Default()
	if c.BGP.Enabled() {
		t.Fatal("BGP enabled by default: a host without a neighbour must run no speaker")
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.AddFlags(fs)
	err := fs.Parse([]string{"--neighbor-address=192.0.2.1,192.0.2.2", "--neighbor-ipv6-address=2001:db8::1",
		"--neighbor-as=65030", "--cluster-as=4200000000", "--holdtime=9s", "--graceful-restart", "--ebgp-multihop=3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	b := c.BGP
	want := []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("2001:db8::1")}
	if got := b.Neighbors(); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("neighbors %v, want %v", got, want)
	}
	if !b.Enabled() || b.NeighborAS != 65030 || b.ClusterAS != 4200000000 || b.HoldTime != 9*time.Second || !b.GracefulRestart || b.EBGPMultihop != 3 {
		t.Errorf("parsed %+v", b)
	}
}

func TestBGPBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in the flag's or Validate's error
	}{
		{[]string{"--neighbor-address=192.0.2.300"}, "192.0.2.300"},
		{[]string{"--neighbor-address=2001:db8::1"}, "wrong family"},
		{[]string{"--neighbor-ipv6-address=192.0.2.1"}, "wrong family"},
		{[]string{"--neighbor-as=4294967296"}, "4294967296"},
		{[]string{"--cluster-as=0"}, "want 1..4294967295"},
		{[]string{"--neighbor-as=-1"}, "want 1..4294967295"},
		{[]string{"--neighbor-address=0.0.0.0"}, "neighbor-address 0.0.0.0: not a router's address"},
		{[]string{"--neighbor-ipv6-address=::1"}, "neighbor-ipv6-address ::1: not a router's address"},
		{[]string{"--holdtime=1s"}, "holdtime 1s"},
		{[]string{"--ebgp-multihop=0"}, "ebgp-multihop 0"},
		{[]string{"--router-id=2001:db8::9"}, "router-id"},
	} {
		cfg := Default()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		cfg.AddFlags(fs)
		err := fs.Parse(c.args)
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.args, err, c.want)
		}
	}
}
