package northbound

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// Client writes edgeovn's topology into the OVN northbound database.
type Client struct {
	nb  client.Client
	log *slog.Logger
	// writes counts committed write transactions, so tests can prove an ensure wrote nothing.
	writes  atomic.Int64
	metrics *ovn.Metrics
	// ports answers which switch holds a port without copying switches (switchports.go).
	ports portIndex
	// group gathers concurrent EnsurePodPort calls into shared transactions.
	group portGroup
}

// Connect connects to the northbound database and returns once its contents are cached.
func Connect(ctx context.Context, req ovn.ConnectRequest) (*Client, error) {
	dbModel, err := nbdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("build northbound model: %w", err)
	}
	// Router and load balancer names are not indexed by the schema; client indexes let the
	// lookups by name use the cache's index instead of scanning every row. Switches, few and
	// large, are read without a copy instead (switchports.go).
	dbModel.SetIndexes(map[string][]model.ClientIndex{
		nbdb.LogicalRouterTable: {{Columns: []model.ColumnKey{{Column: "name"}}}},
		nbdb.LoadBalancerTable:  {{Columns: []model.ColumnKey{{Column: "name"}}}},
	})
	log := req.Log
	if log == nil {
		log = slog.Default()
	}
	req.Log = log
	nb, err := ovn.Connect(ctx, req, dbModel)
	if err != nil {
		return nil, err
	}
	metrics := req.Metrics
	if metrics == nil {
		metrics = ovn.NewMetrics(log, req.SlowTransaction)
	}
	return &Client{nb: nb, log: log, metrics: metrics}, nil
}

// Close disconnects; the Client must not be used afterwards.
func (c *Client) Close() {
	c.nb.Close()
}

func (c *Client) commit(ctx context.Context, ops []ovsdb.Operation) error {
	if len(ops) == 0 {
		return nil
	}
	c.writes.Add(1)
	return c.metrics.Transact(ctx, c.nb, ops)
}

// Stats returns the counters of this client's write transactions.
func (c *Client) Stats() ovn.Stats {
	return c.metrics.Stats()
}
