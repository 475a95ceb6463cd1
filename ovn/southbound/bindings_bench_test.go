package southbound

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/skip"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"
)

// BenchmarkBindingsOn is a node's read of its own bindings on a southbound of a large cluster:
// 10,000 Port_Bindings, 100 of them on this chassis. It reports the time and allocations of
// one read and the heap a Dial client holds (client-heap-kB: what the node role keeps for the
// southbound, measured after a GC, the cluster's bindings never among it).
//
//	go test -run '^$' -bench BindingsOn -benchtime 200x ./ovn/southbound/
func BenchmarkBindingsOn(b *testing.B) {
	const total, here = 10000, 100
	if _, err := exec.LookPath("ovn-sbctl"); err != nil {
		skip.Now(b, "ovn-sbctl not installed (make deps)")
	}
	srv := ovsdbtest.Start(b, "/usr/share/ovn/ovn-sb.ovsschema")
	fillBindings(b, srv.Endpoint, total, here)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := heapInUse()
	c, err := Dial(ctx, ovn.ConnectRequest{Endpoints: []string{srv.Endpoint}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	held := heapInUse() - before
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bs, err := c.BindingsOn(ctx, "edge-1")
		if err != nil || len(bs.Up) != here {
			b.Fatalf("BindingsOn = %d bindings, %v; want %d", len(bs.Up), err, here)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(held)/1024, "client-heap-kB")
}

// fillBindings creates a chassis edge-1 and total Port_Bindings on one datapath, the first
// here of them bound to edge-1 and up, in one ovn-sbctl transaction.
func fillBindings(b *testing.B, db string, total, here int) {
	b.Helper()
	args := []string{"--db=" + db, "chassis-add", "edge-1", "geneve", "192.0.2.5",
		"--", "--id=@dp", "create", "Datapath_Binding", "tunnel_key=1",
		"--", "--id=@ch", "get", "Chassis", "edge-1"}
	for i := 0; i < total; i++ {
		row := []string{"--", "create", "Port_Binding", fmt.Sprintf("logical_port=p%d.default", i), "datapath=@dp", fmt.Sprintf("tunnel_key=%d", i+1)}
		if i < here {
			row = append(row, "chassis=@ch", "up=true")
		}
		args = append(args, row...)
	}
	if out, err := exec.Command("ovn-sbctl", args...).CombinedOutput(); err != nil {
		b.Fatalf("ovn-sbctl: %v\n%s", err, strings.TrimSpace(string(out))[:min(len(out), 2000)])
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
