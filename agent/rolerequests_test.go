package agent

import (
	"crypto/tls"
	"log/slog"
	"net/netip"
	"reflect"
	"testing"

	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/agent/node/health"
	"github.com/edgeovn/edgeovn/agent/startup"
)

// noDynamic stands for a dynamic client; the requests only carry it.
type noDynamic struct{ dynamic.Interface }

// TestRoleRequestsFillEveryField: a field of node.Request or controller.Request that
// nodeRequest or controllerRequest forgets would compile and leave the role with a zero option;
// with every option set, none is zero, and a field named like an option of Config carries
// that option's value.
func TestRoleRequestsFillEveryField(t *testing.T) {
	cfg := config.Default()
	cfg.NodeName = "n1"
	cfg.EncapIP = netip.MustParseAddr("192.0.2.7")
	cfg.DatapathType = "netdev"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	hooks := Hooks{Health: health.NewMonitor(health.MonitorRequest{Log: log}), Metrics: metrics.New(log), Startup: startup.Begin(),
		BGPReload: make(chan config.BGP)}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	nr := nodeRequest(nodeRun{cfg: cfg, kubes: kubeapi.NewSource("/nonexistent", log), tls: tlsConfig, hooks: hooks, started: func() {}, adding: func() {}, log: log})
	checkRequest(t, cfg, reflect.ValueOf(nr))
	cr := controllerRequest(controllerRun{cfg: cfg, kube: &kubeapi.Client{}, dyn: noDynamic{}, tls: tlsConfig, metrics: hooks.Metrics, log: log})
	checkRequest(t, cfg, reflect.ValueOf(cr))
}

// checkRequest: no field of req is zero, and each field named like a field of cfg (the
// embedded parts Cluster, Node, Controller) holds cfg's value.
func checkRequest(t *testing.T, cfg config.Config, req reflect.Value) {
	t.Helper()
	c := reflect.ValueOf(cfg)
	for i := range req.NumField() {
		name := req.Type().Field(i).Name
		f := req.Field(i)
		if f.IsZero() {
			t.Errorf("%s.%s left unset", req.Type(), name)
			continue
		}
		if o := c.FieldByName(name); o.IsValid() && !reflect.DeepEqual(f.Interface(), o.Interface()) {
			t.Errorf("%s.%s = %+v, want Config.%s %+v", req.Type(), name, f.Interface(), name, o.Interface())
		}
	}
}
