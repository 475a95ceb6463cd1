package inspect

import (
	"slices"
	"testing"

	"github.com/edgeovn/edgeovn/ovn/southbound"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

func TestUnbound(t *testing.T) {
	port := func(name string, ids map[string]string) vswitch.Port {
		return vswitch.Port{Name: name, IfaceID: name + ".default", ExternalIDs: ids}
	}
	ports := []vswitch.Port{
		port("bound", map[string]string{"ovn-installed": "true", "ovn-installed-ts": "1"}),
		port("lost", map[string]string{"ovn-installed-ts": "1"}),
		port("never", map[string]string{}),
		port("nodevice", map[string]string{"ovn-installed-ts": "1"}), // the sweep's business
	}
	lost, never := unbound(ports, func(name string) bool { return name == "nodevice" })
	if !slices.Equal(lost, []string{"lost (lost.default)"}) || !slices.Equal(never, []string{"never (never.default)"}) {
		t.Errorf("unbound = %q, %q", lost, never)
	}
}

// A port with ovn-installed is listed when its Port_Binding is not up on this chassis; the
// check flips back once the binding is up.
func TestNotUpHere(t *testing.T) {
	port := func(name string, ids map[string]string) vswitch.Port {
		return vswitch.Port{Name: name, IfaceID: name + ".default", ExternalIDs: ids}
	}
	ports := []vswitch.Port{
		port("web", map[string]string{"ovn-installed": "true", "ovn-installed-ts": "1"}),
		port("db", map[string]string{"ovn-installed": "true", "ovn-installed-ts": "1"}),
		port("lost", map[string]string{"ovn-installed-ts": "1"}), // unbound's business
		port("nodevice", map[string]string{"ovn-installed": "true"}),
	}
	gone := func(name string) bool { return name == "nodevice" }
	released := southbound.Bindings{Registered: true, Up: map[string]bool{"db.default": true}}
	if got := notUpHere(ports, gone, released); !slices.Equal(got, []string{"web (web.default)"}) {
		t.Errorf("notUpHere with web released = %q", got)
	}
	released.Up["web.default"] = true
	if got := notUpHere(ports, gone, released); len(got) != 0 {
		t.Errorf("notUpHere with both up = %q", got)
	}
}
