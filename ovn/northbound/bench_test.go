package northbound_test

import (
	"testing"

	"github.com/edgeovn/edgeovn/ovn/nbbench"
)

// Run with: sudo go test -run '^$' -bench . ./ovn/northbound (or go run ./bench/ovnbench).

func BenchmarkPortCreateSingle(b *testing.B)    { nbbench.PortCreateSingle(b) }
func BenchmarkPortCreateBatched(b *testing.B)   { nbbench.PortCreateBatched(b) }
func BenchmarkClusterAnd50Subnets(b *testing.B) { nbbench.ClusterAnd50Subnets(b) }
func BenchmarkStartup10000Ports(b *testing.B)   { nbbench.Startup(b, 10000) }
func BenchmarkResyncExisting100(b *testing.B)   { nbbench.ResyncExisting(b, 100) }
func BenchmarkResyncExisting1000(b *testing.B)  { nbbench.ResyncExisting(b, 1000) }
func BenchmarkResyncExisting10000(b *testing.B) { nbbench.ResyncExisting(b, 10000) }
