package node

import (
	"slices"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

func localOnly(p vswitch.Port) (bool, string) { return p.BindingLost(), reasonReleased }

func TestBindingWatchDue(t *testing.T) {
	lost := vswitch.Port{Name: "a_h", IfaceID: "a.default", ExternalIDs: map[string]string{"ovn-installed-ts": "1"}}
	bound := vswitch.Port{Name: "b_h", IfaceID: "b.default", ExternalIDs: map[string]string{"ovn-installed": "true", "ovn-installed-ts": "1"}}
	never := vswitch.Port{Name: "c_h", IfaceID: "c.default", ExternalIDs: map[string]string{}}
	noDevice := vswitch.Port{Name: "d_h", IfaceID: "d.default", ExternalIDs: map[string]string{"ovn-installed-ts": "1"}}
	gone := func(name string) bool { return name == "d_h" }
	names := func(ps []lostPort) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	var w bindingWatch
	t0 := time.Unix(1000, 0)
	all := []vswitch.Port{lost, bound, never, noDevice}
	steps := []struct {
		at    time.Duration
		ports []vswitch.Port
		want  []string
	}{
		{0, all, nil},                                          // first sight: not yet
		{2 * time.Second, all, []string{"a_h"}},                // second check in a row: reclaim
		{4 * time.Second, all, nil},                            // reclaimed just now: wait reclaimRetry
		{2*time.Second + reclaimRetry, all, []string{"a_h"}},   // still lost: again
		{4*time.Second + reclaimRetry, all, nil},               // now it waits twice as long
		{2*time.Second + 3*reclaimRetry, all, []string{"a_h"}}, // and again
		{10 * time.Minute, all, []string{"a_h"}},               // the fourth
		{10*time.Minute + 8*reclaimRetry - time.Second, all, nil},
		{11 * time.Minute, []vswitch.Port{bound}, nil}, // bound again: forgotten
		{11*time.Minute + 2*time.Second, all, nil},     // lost anew: first sight again
		{11*time.Minute + 4*time.Second, all, []string{"a_h"}},
	}
	if st := (reclaimState{at: t0, n: 20}); st.next() != t0.Add(reclaimMaxRetry) {
		t.Errorf("after 20 reclaims the next is at %v, want the cap %v", st.next().Sub(t0), reclaimMaxRetry)
	}
	for i, s := range steps {
		got := names(w.due(s.ports, localOnly, gone, t0.Add(s.at)))
		if !slices.Equal(got, s.want) {
			t.Fatalf("step %d: due %v, want %v", i, got, s.want)
		}
		for _, n := range got {
			w.markReclaimed(n, t0.Add(s.at))
		}
	}
}
