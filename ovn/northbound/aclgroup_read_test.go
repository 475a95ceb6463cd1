package northbound

import (
	"errors"
	"slices"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
)

// TestPortGroupACLRules: the rules EnsureACLGroup wrote read back equal (name, action,
// apply-after-lb), so writing them again writes nothing; a missing group is (nil, false);
// another owner's group is refused.
func TestPortGroupACLRules(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	spec := policyGroup()
	f.mustWrite(t, 1, "acl group", func() (err error) { _, err = f.c.EnsureACLGroup(f.ctx, spec); return err })
	got, ok, err := f.c.PortGroupACLRules(f.ctx, spec.Owner, "np.web")
	if err != nil || !ok {
		t.Fatalf("read: %v, exists %v", err, ok)
	}
	want := slices.Clone(spec.PortGroups[0].ACLs)
	slices.Reverse(want) // from-lport sorts before to-lport
	if !slices.Equal(got, want) {
		t.Fatalf("rules read back\n got %+v\nwant %+v", got, want)
	}
	spec.PortGroups[0].ACLs = got
	f.mustWrite(t, 0, "the rules read back", func() (err error) { _, err = f.c.EnsureACLGroup(f.ctx, spec); return err })

	if rules, ok, err := f.c.PortGroupACLRules(f.ctx, spec.Owner, "np.none"); err != nil || ok || rules != nil {
		t.Errorf("missing group: %v %v %v, want nil false nil", rules, ok, err)
	}
	other := OwnerRef{Kind: ovn.KindSecurityGroup, Name: "web"}
	if _, _, err := f.c.PortGroupACLRules(f.ctx, other, "np.web"); !errors.Is(err, ovn.ErrNotOwned) {
		t.Errorf("another owner's group: %v, want ErrNotOwned", err)
	}
}
