package ipam_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ipam"
)

// TestImportReleased plays a new leader with an empty database: the previous leader handed
// out .2, .3 and .4 of a /29, then released .4 and later .2. The new IPAM adopts the live pod
// (.3) and imports the releases: it hands out the never-used .5 and .6 first, then .4, then
// .2, as the previous leader would have; and the order survives a reload. Records it must
// not trust change nothing: a held address, the gateway, an address outside the subnet, a
// record older than the one it has, an unknown subnet.
func TestImportReleased(t *testing.T) {
	ctx := context.Background()
	sn := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/29"), Gateways: addrs("10.0.0.1")}
	m, st := newIPAM(t, sn)
	if _, err := m.Reconcile(ctx, []ipam.Allocation{{Subnet: "s", Owner: owner("p2"), IPs: addrs("10.0.0.3")}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	n, err := m.ImportReleased(ctx, []ipam.Released{
		{Subnet: "s", IP: addrs("10.0.0.4")[0], At: t0},
		{Subnet: "s", IP: addrs("10.0.0.2")[0], At: t0.Add(time.Second)},
		{Subnet: "s", IP: addrs("10.0.0.3")[0], At: t0},                 // held by p2
		{Subnet: "s", IP: addrs("10.0.0.1")[0], At: t0},                 // the gateway
		{Subnet: "s", IP: addrs("10.0.1.9")[0], At: t0},                 // outside
		{Subnet: "s", IP: addrs("10.0.0.4")[0], At: t0.Add(-time.Hour)}, // older than the record above
		{Subnet: "nope", IP: addrs("10.0.0.5")[0], At: t0},              // unknown subnet
	})
	if err != nil || n != 2 {
		t.Fatalf("import: %d recorded, %v; want 2", n, err)
	}
	reloaded, err := ipam.New(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, im := range map[string]*ipam.IPAM{"imported": m, "reloaded": reloaded} {
		var got []string
		for _, o := range []string{"x", "y", "z", "w"} {
			a, err := im.Allocate(ctx, ipam.Request{Subnet: "s", Owner: owner(o)})
			if err != nil {
				t.Fatalf("%s: allocate %s: %v", name, o, err)
			}
			got = append(got, a.IPs[0].String())
		}
		want := []string{"10.0.0.5", "10.0.0.6", "10.0.0.4", "10.0.0.2"}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
			t.Errorf("%s: handed out %v, want %v (never-used first, then least recently released)", name, got, want)
		}
	}
}

func owner(pod string) ipam.Owner { return ipam.Owner{Pod: "default/" + pod, Interface: "eth0"} }
