package subnets

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// TestEventName: an event's object names itself, a deletion's last known state too; anything
// else has no name.
func TestEventName(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetName("vlan10")
	for _, tc := range []struct {
		obj  any
		want string
	}{
		{u, "vlan10"},
		{cache.DeletedFinalStateUnknown{Key: "vlan10", Obj: u}, "vlan10"},
		{cache.DeletedFinalStateUnknown{Key: "x"}, ""},
		{"not an object", ""},
	} {
		if got := eventName(tc.obj); got != tc.want {
			t.Errorf("eventName(%#v) = %q, want %q", tc.obj, got, tc.want)
		}
	}
}
