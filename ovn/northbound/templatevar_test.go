package northbound

import (
	"errors"
	"maps"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

func TestSyncTemplateVars(t *testing.T) {
	f := newFixture(t)
	vars := func() map[string]map[string]string {
		var rows []*nbdb.ChassisTemplateVar
		if err := f.c.nb.List(f.ctx, &rows); err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]string{}
		for _, r := range rows {
			out[r.Chassis] = r.Variables
		}
		return out
	}
	sync := func(tv TemplateVars) func() error {
		return func() error { _, err := f.c.SyncTemplateVars(f.ctx, tv); return err }
	}
	a := TemplateVars{Prefix: "eovn_a_", Values: map[string]map[string]string{"n1": {"eovn_a_1": "10.42.0.5:80"}, "n2": {"eovn_a_1": ""}}}
	b := TemplateVars{Prefix: "eovn_b_", Values: map[string]map[string]string{"n1": {"eovn_b_1": "10.42.0.6:80"}}}
	f.mustWrite(t, 1, "owner a", sync(a))
	f.mustWrite(t, 1, "owner b in the same row", sync(b))
	f.mustWrite(t, 0, "owner a again", sync(a))
	a.Values["n1"]["eovn_a_1"] = "10.42.0.7:80"
	f.mustWrite(t, 1, "owner a changes a value", sync(a))
	got := vars()
	want := map[string]map[string]string{"n1": {"eovn_a_1": "10.42.0.7:80", "eovn_b_1": "10.42.0.6:80"}, "n2": {"eovn_a_1": ""}}
	if len(got) != 2 || !maps.Equal(got["n1"], want["n1"]) || !maps.Equal(got["n2"], want["n2"]) {
		t.Fatalf("variables = %v, want %v", got, want)
	}
	f.mustWrite(t, 1, "owner a gone", sync(TemplateVars{Prefix: "eovn_a_"}))
	if got := vars(); !maps.Equal(got["n1"], map[string]string{"eovn_b_1": "10.42.0.6:80"}) || len(got["n2"]) != 0 {
		t.Fatalf("after owner a left: %v", got)
	}
	if _, err := f.c.SyncTemplateVars(f.ctx, TemplateVars{Prefix: "eovn_c_", Values: map[string]map[string]string{"n1": {"eovn_b_1": "x"}}}); !errors.Is(err, ovn.ErrInvalid) {
		t.Fatalf("a variable outside the owner's prefix: err = %v, want ErrInvalid", err)
	}
	if n, err := f.c.DeleteTemplateVarRows(f.ctx, map[string]bool{"n1": true}); err != nil || n != 1 {
		t.Fatalf("delete rows of gone chassis: %d, %v; want 1", n, err)
	}
	if got := vars(); len(got) != 1 || got["n1"] == nil {
		t.Fatalf("rows after deleting n2's: %v", got)
	}
}
