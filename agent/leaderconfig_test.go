package agent

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/node"
)

// TestLeaderConfigFillsEveryField: a field of leader.Config that leaderConfig forgets would
// compile and leave the election unconfigured in it; with every option set, none is zero. The
// grant of the rights is recorded where node.Cleanup removes it.
func TestLeaderConfigFillsEveryField(t *testing.T) {
	cfg := config.Default()
	cfg.Kubeconfig = "/etc/edgeovn/kubeconfig"
	cfg.Services, cfg.NetworkPolicy = true, true
	lc := leaderConfig(cfg)
	v := reflect.ValueOf(lc)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("leaderConfig leaves leader.Config.%s unset", v.Type().Field(i).Name)
		}
	}
	if want := filepath.Join(filepath.Dir(cfg.CNISocket), node.RightsRecordName); lc.RightsRecord != want {
		t.Errorf("rights record at %q, want %q (beside the CNI socket, removed by node.Cleanup)", lc.RightsRecord, want)
	}
}
