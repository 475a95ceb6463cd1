package opsserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/agent/node/health"
)

// TestEndpointsFollowHealth serves the endpoints over a real health.Monitor and sees /readyz
// and /healthz flip to 503 naming the failed check when a check fails, and back to 200 when it
// passes; /metrics serves edgeovn's metrics.
func TestEndpointsFollowHealth(t *testing.T) {
	var bridgeGone, ovsdbGone atomic.Bool
	checks := []health.Check{
		{Name: "br-int", Run: func(context.Context) error { return failIf(&bridgeGone, "no bridge br-int") }},
		{Name: "open_vswitch database", Run: func(context.Context) error { return failIf(&ovsdbGone, "connection refused") }, Liveness: true},
	}
	mon := health.NewMonitor(health.MonitorRequest{Interval: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := mon.Attach(checks); err != nil {
		t.Fatal(err)
	}
	go func() { // the node role's start: an evaluation at once, then on the timer
		_ = mon.Check(ctx)
		_ = mon.Tick(ctx)
	}()
	m := metrics.New(nil)
	m.ObserveCNI("ADD", 0, 20*time.Millisecond)
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Request{Address: "127.0.0.1:0", Metrics: m.Handler(), Alive: mon.Alive, Ready: mon.Check,
			Listening: func(a net.Addr) { addr <- a }})
	}()
	base := "http://" + (<-addr).String()

	eventually(t, "ready at first", func() bool { return get(t, base+"/readyz") == "200 ok" })
	if got := get(t, base+"/healthz"); got != "200 ok" {
		t.Errorf("/healthz on a healthy node: %s", got)
	}
	bridgeGone.Store(true)
	if got := get(t, base+"/readyz"); got != "503 not ok: datapath not ready: br-int: no bridge br-int" {
		t.Errorf("/readyz without br-int: %s", got)
	}
	eventually(t, "alive without br-int (not a liveness check)", func() bool { return get(t, base+"/healthz") == "200 ok" })
	bridgeGone.Store(false)
	if got := get(t, base+"/readyz"); got != "200 ok" {
		t.Errorf("/readyz with br-int back: %s", got)
	}
	ovsdbGone.Store(true)
	eventually(t, "/healthz fails without the database", func() bool {
		return strings.HasPrefix(get(t, base+"/healthz"), "503 not ok: datapath not ready: open_vswitch database: connection refused")
	})
	ovsdbGone.Store(false)
	eventually(t, "/healthz recovers", func() bool { return get(t, base+"/healthz") == "200 ok" })

	body := get(t, base+"/metrics")
	for _, want := range []string{`edgeovn_cni_request_duration_seconds_count{result="ok",verb="ADD"} 1`,
		`edgeovn_ovsdb_transactions_total{db="OVN_Northbound"} 0`, "edgeovn_controller_leader 0"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after its context ended: %v", err)
	}
}

func TestServeReportsListenFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = Serve(context.Background(), Request{Address: ln.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), "metrics-address") || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("Serve on a taken address = %v, want an error naming metrics-address and the address", err)
	}
}

func failIf(b *atomic.Bool, msg string) error {
	if b.Load() {
		return errors.New(msg)
	}
	return nil
}

// get returns "<status code> <body without the final newline>".
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(url, "/metrics") {
		return string(b)
	}
	return strings.TrimSuffix(resp.Status[:3]+" "+string(b), "\n")
}

func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestControllerEndpoint: /controller reports the state the election last set, with the
// reason while ineligible.
func TestControllerEndpoint(t *testing.T) {
	m := metrics.New(nil)
	h := Handler(Request{Controller: m.ControllerState})
	get := func() string {
		rec := &recorder{header: http.Header{}}
		h.ServeHTTP(rec, mustRequest(t, "/controller"))
		return strings.TrimSpace(rec.body.String())
	}
	if got := get(); got != "starting" {
		t.Errorf("before the election: %q", got)
	}
	m.SetControllerState(metrics.StateIneligible, "OVN_Northbound unreachable: x")
	if got := get(); got != "ineligible: OVN_Northbound unreachable: x" {
		t.Errorf("ineligible: %q", got)
	}
	m.SetControllerState(metrics.StateLeader, "")
	if got := get(); got != "leader" {
		t.Errorf("leader: %q", got)
	}
}

type recorder struct {
	header http.Header
	body   strings.Builder
	code   int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

func mustRequest(t *testing.T, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://x"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestProfilingOnlyWhenAsked: /debug/pprof/ answers with the heap profile's entry when
// Profiling is on, and is not found when it is off (the default).
func TestProfilingOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		rec := &recorder{header: http.Header{}, code: http.StatusOK}
		Handler(Request{Profiling: on}).ServeHTTP(rec, mustRequest(t, "/debug/pprof/"))
		served := rec.code == http.StatusOK && strings.Contains(rec.body.String(), "heap")
		if served != on {
			t.Errorf("Profiling %t: /debug/pprof/ answered %d %.80q", on, rec.code, rec.body.String())
		}
	}
}
