package northbound

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

var subnetOwner = OwnerRef{Kind: ovn.KindSubnet, Name: "ovn-default"}

func privateRules() []ACLRule {
	return []ACLRule{
		{Direction: nbdb.ACLDirectionToLport, Priority: 2900, Match: "ip4 && !(ip4.src == 10.42.0.0/16 && ip4.dst == 10.42.0.0/16)",
			Action: nbdb.ACLActionDrop, Name: "ovn-default:private-ip4"},
		{Direction: nbdb.ACLDirectionToLport, Priority: 3000, Match: "ip4.src == 100.64.0.0/16", Action: nbdb.ACLActionAllowRelated},
	}
}

// switchACLs lists the switch's ACLs as "direction priority match action owner", sorted.
func switchACLs(t *testing.T, f fixture, name string) []string {
	t.Helper()
	ls, err := f.c.switchByName(f.ctx, name)
	if err != nil || ls == nil {
		t.Fatalf("switch %s: %v", name, err)
	}
	acls, err := byUUID(f.ctx, f.c, ls.ACLs, func(u string) *nbdb.ACL { return &nbdb.ACL{UUID: u} })
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range acls {
		owner := "foreign"
		if ovn.IsOwned(a.ExternalIDs) {
			owner = a.ExternalIDs[ovn.OwnerKindKey] + "/" + a.ExternalIDs[ovn.OwnerKey]
		}
		out = append(out, fmt.Sprintf("%s %d %s %s %s", a.Direction, a.Priority, a.Match, a.Action, owner))
	}
	slices.Sort(out)
	return out
}

func line(r ACLRule, owner string) string {
	return fmt.Sprintf("%s %d %s %s %s", r.Direction, r.Priority, r.Match, r.Action, owner)
}

// TestEnsureSwitchACLs: {initial switch ACLs, wanted} -> {ACLs after, writes}. A foreign ACL
// and another owner's stay whatever the Subnet wants; the Subnet's own are inserted, repaired,
// removed; an unchanged set writes nothing.
func TestEnsureSwitchACLs(t *testing.T) {
	rules := privateRules()
	changed := slices.Clone(rules)
	changed[0].Action = nbdb.ACLActionReject
	other := OwnerRef{Kind: ovn.KindSubnet, Name: "elsewhere"}
	otherRule := ACLRule{Direction: nbdb.ACLDirectionToLport, Priority: 3000, Match: "ip4.src == 100.64.0.0/16", Action: nbdb.ACLActionAllow}
	foreign := "to-lport 1234 ip4.src == 1.2.3.4 drop foreign"
	mine := "Subnet/ovn-default"
	tests := []struct {
		name    string
		initial []ACLRule // the Subnet's, applied first
		want    []ACLRule
		writes  int64
		after   []string // besides the foreign ACL and the other owner's
	}{
		{"insert into a switch with others' acls", nil, rules, 1, []string{line(rules[0], mine), line(rules[1], mine)}},
		{"unchanged: no write", rules, rules, 0, []string{line(rules[0], mine), line(rules[1], mine)}},
		{"action repaired in place", rules, changed, 1, []string{line(changed[0], mine), line(rules[1], mine)}},
		{"one removed", rules, rules[:1], 1, []string{line(rules[0], mine)}},
		{"private off: all of the subnet's removed", rules, nil, 1, nil},
		{"nothing wanted, nothing there: no write", nil, nil, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ensureClusterAndSubnet(t, f)
			f.srv.Run(t, "ovn-nbctl", "acl-add", "ovn-default", "to-lport", "1234", "ip4.src == 1.2.3.4", "drop")
			f.waitCache(t, "the foreign acl", func() bool {
				ls, _ := f.c.switchByName(f.ctx, "ovn-default")
				return ls != nil && len(ls.ACLs) == 1
			})
			if _, err := f.c.EnsureSwitchACLs(f.ctx, SwitchACLsSpec{Switch: "ovn-default", Owner: other, ACLs: []ACLRule{otherRule}}); err != nil {
				t.Fatal(err)
			}
			if tt.initial != nil {
				if _, err := f.c.EnsureSwitchACLs(f.ctx, SwitchACLsSpec{Switch: "ovn-default", Owner: subnetOwner, ACLs: tt.initial}); err != nil {
					t.Fatal(err)
				}
			}
			var wrote bool
			f.mustWrite(t, tt.writes, tt.name, func() (err error) {
				wrote, err = f.c.EnsureSwitchACLs(f.ctx, SwitchACLsSpec{Switch: "ovn-default", Owner: subnetOwner, ACLs: tt.want})
				return err
			})
			if wrote != (tt.writes > 0) {
				t.Errorf("wrote = %v with %d writes", wrote, tt.writes)
			}
			want := append([]string{foreign, line(otherRule, "Subnet/elsewhere")}, tt.after...)
			slices.Sort(want)
			if got := switchACLs(t, f, "ovn-default"); !slices.Equal(got, want) {
				t.Errorf("acls =\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// TestSwitchACLsRefused: bad input, a missing switch and a switch edgeovn does not own write
// nothing; deleting the Subnet's rows leaves none of its ACLs and keeps the foreign one.
func TestSwitchACLsRefused(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	f.srv.Run(t, "ovn-nbctl", "ls-add", "theirs")
	f.waitCache(t, "the foreign switch", func() bool { ls, _ := f.c.switchByName(f.ctx, "theirs"); return ls != nil })
	bad := privateRules()
	bad[1].Priority = 40000
	cases := []struct {
		spec SwitchACLsSpec
		want error
	}{
		{SwitchACLsSpec{Switch: "ovn-default", Owner: subnetOwner, ACLs: bad}, ovn.ErrInvalid},
		{SwitchACLsSpec{Switch: "ovn-default", ACLs: privateRules()}, ovn.ErrInvalid},
		{SwitchACLsSpec{Switch: "ovn-default", Owner: subnetOwner, ACLs: append(privateRules(), privateRules()[0])}, ovn.ErrInvalid},
		{SwitchACLsSpec{Switch: "missing", Owner: subnetOwner, ACLs: privateRules()}, ovn.ErrNotFound},
		{SwitchACLsSpec{Switch: "theirs", Owner: subnetOwner, ACLs: privateRules()}, ovn.ErrNotOwned},
	}
	for i, c := range cases {
		f.mustWrite(t, 0, fmt.Sprintf("case %d", i), func() error {
			if _, err := f.c.EnsureSwitchACLs(f.ctx, c.spec); !errors.Is(err, c.want) {
				t.Errorf("case %d: err = %v, want %v", i, err, c.want)
			}
			return nil
		})
	}
	f.mustWrite(t, 1, "subnet acls", func() error {
		_, err := f.c.EnsureSwitchACLs(f.ctx, SwitchACLsSpec{Switch: "ovn-default", Owner: subnetOwner, ACLs: privateRules()})
		return err
	})
	f.srv.Run(t, "ovn-nbctl", "acl-add", "ovn-default", "to-lport", "1234", "ip4.src == 1.2.3.4", "drop")
	f.waitCache(t, "the foreign acl", func() bool { return len(foreignACLs(t, f)) == 1 })
	if _, err := f.c.DeleteOwned(f.ctx, subnetOwner); err != nil {
		t.Fatal(err)
	}
	var acls []*nbdb.ACL
	if err := f.c.nb.List(f.ctx, &acls); err != nil {
		t.Fatal(err)
	}
	for _, a := range acls {
		if ovn.IsOwned(a.ExternalIDs) {
			t.Errorf("acl %q of %v survived the subnet's deletion", a.Match, a.ExternalIDs)
		}
	}
	if len(acls) != 1 {
		t.Errorf("%d acls left, want the foreign one", len(acls))
	}
}

// TestGCKeepsChildAddedBehindCache: a foreign ACL added to an owned switch after the cache
// was read (the deletion planned without it) fails the deletion as a conflict instead of
// being garbage-collected with the switch; the next pass keeps the switch and the ACL.
func TestGCKeepsChildAddedBehindCache(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	units, err := f.c.gcUnits(f.ctx, allBut(subnetOwner))
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Run(t, "ovn-nbctl", "acl-add", "ovn-default", "to-lport", "1234", "ip4.src == 1.2.3.4", "drop")
	var ops []ovsdb.Operation
	for _, u := range units {
		ops = append(ops, u...)
	}
	if err := f.c.commit(f.ctx, ops); !errors.Is(err, ovn.ErrConflict) {
		t.Fatalf("deletion planned before the foreign acl: err = %v, want %v", err, ovn.ErrConflict)
	}
	if out := f.srv.Run(t, "ovn-nbctl", "acl-list", "ovn-default"); !strings.Contains(out, "ip4.src == 1.2.3.4") {
		t.Fatalf("acls of ovn-default after the refused deletion:\n%s\nwant the foreign one", out)
	}
	f.waitCache(t, "the foreign acl", func() bool { return len(foreignACLs(t, f)) == 1 })
	if _, err := f.c.DeleteOwned(f.ctx, subnetOwner); err != nil {
		t.Fatal(err)
	}
	ls, err := f.c.switchByName(f.ctx, "ovn-default")
	if err != nil || ls == nil || len(ls.ACLs) != 1 {
		t.Fatalf("switch after the next pass = %+v, %v; want it kept with the foreign acl", ls, err)
	}
}

// foreignACLs lists (from the cache) the matches of ACLs edgeovn does not own.
func foreignACLs(t *testing.T, f fixture) []string {
	t.Helper()
	var acls []*nbdb.ACL
	if err := f.c.nb.List(f.ctx, &acls); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range acls {
		if !ovn.IsOwned(a.ExternalIDs) {
			out = append(out, a.Match)
		}
	}
	return out
}
