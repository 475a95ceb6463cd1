package metrics

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/fakestore"
)

// TestNilMetricsDoNothing: components run without metrics (tests, tools) call them freely.
func TestNilMetricsDoNothing(t *testing.T) {
	var m *Metrics
	m.ObserveCNI("ADD", 0, time.Millisecond)
	m.SetLeader(true)
	m.ObserveReconcile("pod", nil)
	m.ObserveLostBinding(BindingReclaimed)
	m.SetIPAM(nil)
	st := fakestore.New()
	if m.CountIPAM(st) != ipam.Store(st) || m.NBTransactions() != nil || m.OVSTransactions() != nil {
		t.Fatal("a nil Metrics wraps or makes something")
	}
}

// TestIPAMMetrics: durable allocations and releases are counted by subnet (an Allocate that
// changes nothing, and a failed commit, count nothing), and the usage of the IPAM set with
// SetIPAM is exported until it is unset.
func TestIPAMMetrics(t *testing.T) {
	ctx := context.Background()
	m := New(nil)
	st := &failingStore{Store: fakestore.New()}
	a, err := ipam.New(ctx, m.CountIPAM(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EnsureSubnet(ctx, ipam.Subnet{Name: "ovn-default", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/24")},
		Gateways: []netip.Addr{netip.MustParseAddr("10.42.0.1")}}); err != nil {
		t.Fatal(err)
	}
	web := ipam.Owner{Pod: "default/web", Interface: "eth0"}
	for range 2 { // the second changes nothing
		if _, err := a.Allocate(ctx, ipam.Request{Subnet: "ovn-default", Owner: web}); err != nil {
			t.Fatal(err)
		}
	}
	st.fail = true
	if _, err := a.Allocate(ctx, ipam.Request{Subnet: "ovn-default", Owner: ipam.Owner{Pod: "default/db", Interface: "eth0"}}); err == nil {
		t.Fatal("allocation on a failing store succeeded")
	}
	st.fail = false
	if err := a.Release(ctx, web); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(m.allocs.WithLabelValues("ovn-default")); got != 1 {
		t.Errorf("allocations counted: %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.releases.WithLabelValues("ovn-default")); got != 1 {
		t.Errorf("releases counted: %v, want 1", got)
	}
	if _, err := a.Allocate(ctx, ipam.Request{Subnet: "ovn-default", Owner: web}); err != nil {
		t.Fatal(err)
	}
	m.SetIPAM(a)
	want := `
# HELP edgeovn_ipam_addresses_capacity Addresses a subnet's CIDR can hand out: its usable range less the gateway and excluded ranges.
# TYPE edgeovn_ipam_addresses_capacity gauge
edgeovn_ipam_addresses_capacity{cidr="10.42.0.0/24",subnet="ovn-default"} 253
# HELP edgeovn_ipam_addresses_used Addresses held by pods and nodes, by subnet and CIDR (exported by the controller role's host).
# TYPE edgeovn_ipam_addresses_used gauge
edgeovn_ipam_addresses_used{cidr="10.42.0.0/24",subnet="ovn-default"} 1
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "edgeovn_ipam_addresses_used", "edgeovn_ipam_addresses_capacity"); err != nil {
		t.Error(err)
	}
	m.SetIPAM(nil)
	if n, err := testutil.GatherAndCount(m.reg, "edgeovn_ipam_addresses_used"); err != nil || n != 0 {
		t.Errorf("usage exported after the term ended: %d series, %v", n, err)
	}
}

// TestOVSDBMetrics: the transactions the clients record are exported with their latency as a
// cumulative histogram.
func TestOVSDBMetrics(t *testing.T) {
	m := New(nil)
	m.NBTransactions().Observe(2*time.Millisecond, 3, nil)
	m.NBTransactions().Observe(30*time.Millisecond, 1, errors.New("constraint violation"))
	m.OVSTransactions().Observe(500*time.Microsecond, 1, nil)
	want := `
# HELP edgeovn_ovsdb_transaction_duration_seconds Latency of write transactions, from the request to the database's reply.
# TYPE edgeovn_ovsdb_transaction_duration_seconds histogram
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="OVN_Northbound",le="0.001"} 0
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="OVN_Northbound",le="0.005"} 1
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="OVN_Northbound",le="0.025"} 1
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="OVN_Northbound",le="0.1"} 2
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="OVN_Northbound",le="0.5"} 2
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="OVN_Northbound",le="2"} 2
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="OVN_Northbound",le="+Inf"} 2
edgeovn_ovsdb_transaction_duration_seconds_sum{db="OVN_Northbound"} 0.032
edgeovn_ovsdb_transaction_duration_seconds_count{db="OVN_Northbound"} 2
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="Open_vSwitch",le="0.001"} 1
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="Open_vSwitch",le="0.005"} 1
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="Open_vSwitch",le="0.025"} 1
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="Open_vSwitch",le="0.1"} 1
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="Open_vSwitch",le="0.5"} 1
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="Open_vSwitch",le="2"} 1
edgeovn_ovsdb_transaction_duration_seconds_bucket{db="Open_vSwitch",le="+Inf"} 1
edgeovn_ovsdb_transaction_duration_seconds_sum{db="Open_vSwitch"} 0.0005
edgeovn_ovsdb_transaction_duration_seconds_count{db="Open_vSwitch"} 1
# HELP edgeovn_ovsdb_transaction_failures_total Write transactions that failed (transport error or a failed operation), conflicts included.
# TYPE edgeovn_ovsdb_transaction_failures_total counter
edgeovn_ovsdb_transaction_failures_total{db="OVN_Northbound"} 1
edgeovn_ovsdb_transaction_failures_total{db="Open_vSwitch"} 0
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want),
		"edgeovn_ovsdb_transaction_duration_seconds", "edgeovn_ovsdb_transaction_failures_total"); err != nil {
		t.Error(err)
	}
}

func TestLeaderAndReconciles(t *testing.T) {
	m := New(nil)
	m.SetLeader(true)
	m.ObserveReconcile("pod", nil)
	m.ObserveReconcile("pod", errors.New("conflict"))
	m.ObserveCNI("STATUS", 50, time.Millisecond)
	if testutil.ToFloat64(m.leader) != 1 || testutil.ToFloat64(m.reconciles.WithLabelValues("pod", "error")) != 1 {
		t.Errorf("leader %v, pod errors %v", testutil.ToFloat64(m.leader), testutil.ToFloat64(m.reconciles.WithLabelValues("pod", "error")))
	}
	if n := testutil.CollectAndCount(m.cni, "edgeovn_cni_request_duration_seconds"); n != 1 {
		t.Errorf("cni series: %d", n)
	}
	m.SetLeader(false)
	if testutil.ToFloat64(m.leader) != 0 {
		t.Error("leader gauge stays 1 after the Lease is lost")
	}
}

// failingStore fails its commits while fail is set.
type failingStore struct {
	ipam.Store
	fail bool
}

func (s *failingStore) Commit(ctx context.Context, c []ipam.Change) error {
	if s.fail {
		return errors.New("disk full")
	}
	return s.Store.Commit(ctx, c)
}

// TestLostBindings: each reclaim of a lost pod binding is counted by its result.
func TestLostBindings(t *testing.T) {
	m := New(nil)
	m.ObserveLostBinding(BindingReclaimed)
	m.ObserveLostBinding(BindingReclaimed)
	m.ObserveLostBinding(BindingFailed)
	want := `
# HELP edgeovn_pod_binding_reclaims_total Reclaims of local pod ports whose OVN binding was lost after ovn-installed (released by ovn-controller), by result (reclaimed: written, failed: not); a port that stays lost is reclaimed again with a growing delay.
# TYPE edgeovn_pod_binding_reclaims_total counter
edgeovn_pod_binding_reclaims_total{result="failed"} 1
edgeovn_pod_binding_reclaims_total{result="reclaimed"} 2
`
	if err := testutil.CollectAndCompare(m.lost, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
