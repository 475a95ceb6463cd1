package config

import (
	"flag"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestObserveFlags(t *testing.T) {
	c := Default()
	if c.EnableMirror || c.EnablePinger || c.MirrorIface != "mirror0" {
		t.Fatalf("defaults: mirror %v pinger %v iface %q; want both off and mirror0", c.EnableMirror, c.EnablePinger, c.MirrorIface)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.AddFlags(fs)
	err := fs.Parse([]string{"--enable-mirror", "--mirror-iface=mir1", "--enable-pinger", "--pinger-interval=2s",
		"--pinger-external-address=192.0.2.1,192.0.2.2", "--pinger-external-address=2001:db8::1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !c.EnableMirror || c.MirrorIface != "mir1" || !c.EnablePinger || c.PingerInterval != 2*time.Second || len(c.PingerExternal) != 3 {
		t.Errorf("parsed %+v %+v", c.Mirror, c.Pinger)
	}
	if want := netip.MustParseAddr("10.43.0.10"); c.PingerClusterDNS != want {
		t.Errorf("cluster DNS %v, want %v (k3s's)", c.PingerClusterDNS, want)
	}
}

func TestObserveValidate(t *testing.T) {
	for flagValue, want := range map[string]string{
		"--mirror-iface=ovn0":                "mirror-iface",
		"--mirror-iface=a-name-far-too-long": "mirror-iface",
		"--pinger-interval=10ms":             "pinger-interval",
		"--pinger-max-targets=0":             "pinger-max-targets 0: at least 1",
		"--pinger-pods-per-node=-1":          "pinger-pods-per-node -1: 0 or more",
	} {
		c := Default()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.AddFlags(fs)
		if err := fs.Parse([]string{"--enable-pinger", flagValue}); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", flagValue, err, want)
		}
	}
}
