package northbound

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

func TestBumpNBCfg(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 0, "bump without NB_Global", func() error {
		if err := f.c.BumpNBCfg(f.ctx); !errors.Is(err, ovn.ErrNotFound) {
			t.Fatalf("BumpNBCfg without an NB_Global row = %v, want ErrNotFound", err)
		}
		return nil
	})
	// ovn-northd creates the row; another client (ovn-nbctl --wait) may have counted already.
	f.insertForeign(t, f.create(t, &nbdb.NBGlobal{NbCfg: 5, Options: map[string]string{"mac_prefix": "0a:58:0a"}}))
	f.waitCache(t, "NB_Global", func() bool {
		var rows []nbdb.NBGlobal
		return f.c.nb.List(f.ctx, &rows) == nil && len(rows) == 1
	})
	for _, want := range []string{"6", "7"} {
		f.mustWrite(t, 1, "bump", func() error { return f.c.BumpNBCfg(f.ctx) })
		got := strings.TrimSpace(f.srv.Run(t, "ovn-nbctl", "get", "NB_Global", ".", "nb_cfg"))
		if got != want {
			t.Fatalf("nb_cfg after a bump = %s, want %s", got, want)
		}
	}
	if opts := strings.TrimSpace(f.srv.Run(t, "ovn-nbctl", "get", "NB_Global", ".", "options")); opts != `{mac_prefix="0a:58:0a"}` {
		t.Errorf("options after bumps = %s, want them kept", opts)
	}
}
