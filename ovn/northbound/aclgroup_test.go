package northbound

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

func policyGroup() ACLGroupSpec {
	return ACLGroupSpec{
		Owner: OwnerRef{Kind: ovn.KindNetworkPolicy, Name: "x/web"},
		PortGroups: []PortGroupACLs{{Name: "np.web", Ports: []string{"p0.default", "p1.default", "ghost.default"},
			ACLs: []ACLRule{
				{Direction: nbdb.ACLDirectionToLport, Priority: 1001, Match: "outport == @np.web && ip4.src == $np.web.in0_ip4",
					Action: nbdb.ACLActionAllowRelated, Name: "x/web:ingress:0"},
				{Direction: nbdb.ACLDirectionFromLport, Priority: 1001, Match: "inport == @np.web && ip4.dst == 10.0.0.0/8",
					Action: nbdb.ACLActionAllowRelated, AfterLB: true},
			}}},
		AddressSets: []AddressSetSpec{{Name: "np.web.in0_ip4", Addresses: []netip.Prefix{netip.MustParsePrefix("10.42.0.12/32")}}},
	}
}

// TestEnsureACLGroup: a policy's port group, ACLs and address set in one transaction; again,
// nothing; a changed spec repairs, adds and removes rows in one transaction; another owner
// cannot take the names; DeleteOwned leaves nothing behind.
func TestEnsureACLGroup(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	pods := []PodPortSpec{numberedPod(0), numberedPod(1)}
	f.mustWrite(t, 1, "pod ports", func() error { return f.c.EnsurePodPorts(f.ctx, pods) })
	spec := policyGroup()
	var res ACLGroupResult
	f.mustWrite(t, 1, "acl group", func() (err error) { res, err = f.c.EnsureACLGroup(f.ctx, spec); return err })
	if !slices.Equal(res.Missing, []string{"ghost.default"}) || !res.Wrote {
		t.Fatalf("result = %+v, want ghost.default missing and a write", res)
	}
	f.mustWrite(t, 0, "acl group again", func() (err error) { _, err = f.c.EnsureACLGroup(f.ctx, spec); return err })
	acls := f.srv.Run(t, "ovn-nbctl", "acl-list", "np.web")
	for _, want := range []string{"to-lport  1001 (outport == @np.web && ip4.src == $np.web.in0_ip4) allow-related", "from-lport  1001 (inport == @np.web"} {
		if !strings.Contains(acls, want) {
			t.Errorf("acl-list lacks %q:\n%s", want, acls)
		}
	}
	if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=options", "find", "ACL", "direction=from-lport"); !strings.Contains(out, "apply-after-lb=true") {
		t.Errorf("from-lport acl options = %q", out)
	}
	if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=name", "find", "ACL", "direction=to-lport"); strings.TrimSpace(out) != "x/web:ingress:0" {
		t.Errorf("to-lport acl name = %q", out)
	}

	spec.PortGroups[0].Ports = spec.PortGroups[0].Ports[:1]
	spec.PortGroups[0].ACLs = []ACLRule{spec.PortGroups[0].ACLs[0], {Direction: nbdb.ACLDirectionToLport, Priority: 1001,
		Match: "outport == @np.web && tcp.dst == 80", Action: nbdb.ACLActionAllowRelated}}
	spec.PortGroups[0].ACLs[0].Action = nbdb.ACLActionDrop
	spec.AddressSets = []AddressSetSpec{{Name: "np.web.in1_ip4"}}
	f.mustWrite(t, 1, "changed acl group", func() (err error) { res, err = f.c.EnsureACLGroup(f.ctx, spec); return err })
	if len(res.Missing) != 0 {
		t.Errorf("missing = %v", res.Missing)
	}
	acls = f.srv.Run(t, "ovn-nbctl", "acl-list", "np.web")
	if !strings.Contains(acls, "$np.web.in0_ip4) drop") || !strings.Contains(acls, "tcp.dst == 80") || strings.Contains(acls, "from-lport") {
		t.Errorf("acl-list after change:\n%s", acls)
	}
	if n := len(strings.Fields(f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=_uuid", "list", "ACL"))); n != 2 {
		t.Errorf("%d ACL rows after change, want 2 (the dropped one deleted)", n)
	}
	if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=name", "list", "Address_Set"); strings.TrimSpace(out) != "np.web.in1_ip4" {
		t.Errorf("address sets after change = %q", out)
	}
	if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=ports", "list", "Port_Group"); len(strings.Fields(out)) != 1 {
		t.Errorf("port group ports after change = %q", out)
	}

	thief := spec
	thief.Owner = OwnerRef{Kind: ovn.KindNetworkPolicy, Name: "y/other"}
	if _, err := f.c.EnsureACLGroup(f.ctx, thief); !errors.Is(err, ovn.ErrNotOwned) {
		t.Fatalf("another owner's ensure = %v, want ErrNotOwned", err)
	}
	if owners, err := f.c.ACLGroupOwners(f.ctx, ovn.KindNetworkPolicy); err != nil || !slices.Equal(owners, []string{"x/web"}) {
		t.Fatalf("owners = %v, %v", owners, err)
	}
	// Dropping the port group from the spec deletes it with its ACLs.
	spec.PortGroups = nil
	f.mustWrite(t, 1, "no port group", func() (err error) { _, err = f.c.EnsureACLGroup(f.ctx, spec); return err })
	if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=_uuid", "list", "ACL"); strings.TrimSpace(out) != "" {
		t.Errorf("ACLs left after the port group went: %q", out)
	}
	n, err := f.c.DeleteOwned(f.ctx, spec.Owner)
	if err != nil || n != 1 {
		t.Fatalf("DeleteOwned = %d, %v; want the address set deleted", n, err)
	}
	for _, table := range []string{"Port_Group", "Address_Set", "ACL"} {
		if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=_uuid", "list", table); strings.TrimSpace(out) != "" {
			t.Errorf("%s rows left: %q", table, out)
		}
	}
}

func TestACLGroupRejectsBadInput(t *testing.T) {
	owner := OwnerRef{Kind: ovn.KindNetworkPolicy, Name: "x/web"}
	long := strings.Repeat("n", MaxACLName+1)
	rule := ACLRule{Direction: nbdb.ACLDirectionToLport, Priority: 1001, Match: "ip", Action: nbdb.ACLActionAllow}
	for name, spec := range map[string]ACLGroupSpec{
		"no owner":        {PortGroups: []PortGroupACLs{{Name: "pg"}}},
		"bad group name":  {Owner: owner, PortGroups: []PortGroupACLs{{Name: "pg-1"}}},
		"group twice":     {Owner: owner, PortGroups: []PortGroupACLs{{Name: "pg"}, {Name: "pg"}}},
		"acl twice":       {Owner: owner, PortGroups: []PortGroupACLs{{Name: "pg", ACLs: []ACLRule{rule, rule}}}},
		"long acl name":   {Owner: owner, PortGroups: []PortGroupACLs{{Name: "pg", ACLs: []ACLRule{{Direction: rule.Direction, Priority: 1, Match: "ip", Action: "allow", Name: long}}}}},
		"after-lb to-lp":  {Owner: owner, PortGroups: []PortGroupACLs{{Name: "pg", ACLs: []ACLRule{{Direction: rule.Direction, Priority: 1, Match: "ip", Action: "allow", AfterLB: true}}}}},
		"bad address set": {Owner: owner, AddressSets: []AddressSetSpec{{Name: "as", Addresses: []netip.Prefix{netip.MustParsePrefix("10.0.0.1/8")}}}},
	} {
		if err := spec.Validate(); !errors.Is(err, ovn.ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", name, err)
		}
	}
}
