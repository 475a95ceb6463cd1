package vswitch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/ovn-org/libovsdb/cache"
	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// Client writes edgeovn's rows into the local Open_vSwitch database.
type Client struct {
	ovs client.Client
	log *slog.Logger
	// writes counts committed write transactions, so tests can prove an ensure wrote nothing.
	writes  atomic.Int64
	metrics *ovn.Metrics

	mu      sync.Mutex
	waiters map[string]*waitSet // by interface name
	// datapathChanged holds a token after a change of the Datapath or Open_vSwitch tables.
	datapathChanged chan struct{}
}

// waitSet is the channel closed on the next change of one interface, shared by its waiters.
type waitSet struct {
	ch chan struct{}
	n  int
}

// Connect connects to the Open_vSwitch database and returns once its contents are cached.
func Connect(ctx context.Context, req ovn.ConnectRequest) (*Client, error) {
	dbModel, err := vswitchdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("build Open_vSwitch model: %w", err)
	}
	if req.Log == nil {
		req.Log = slog.Default()
	}
	ovs, err := ovn.Connect(ctx, req, dbModel)
	if err != nil {
		return nil, err
	}
	metrics := req.Metrics
	if metrics == nil {
		metrics = ovn.NewMetrics(req.Log, req.SlowTransaction)
	}
	c := &Client{ovs: ovs, log: req.Log, waiters: make(map[string]*waitSet),
		metrics: metrics, datapathChanged: make(chan struct{}, 1)}
	ovs.Cache().AddEventHandler(&cache.EventHandlerFuncs{
		AddFunc:    func(table string, m model.Model) { c.changed(table, m) },
		UpdateFunc: func(table string, _, m model.Model) { c.changed(table, m) },
	})
	return c, nil
}

// changed is the cache event handler; it must not block (libovsdb runs handlers one at a
// time on its event loop).
func (c *Client) changed(table string, m model.Model) {
	switch table {
	case vswitchdb.InterfaceTable:
		c.interfaceChanged(m)
	case vswitchdb.DatapathTable, vswitchdb.OpenvSwitchTable:
		select {
		case c.datapathChanged <- struct{}{}:
		default: // a token is pending already
		}
	}
}

// Close disconnects; the Client must not be used afterwards.
func (c *Client) Close() {
	c.ovs.Close()
}

func (c *Client) commit(ctx context.Context, ops []ovsdb.Operation) error {
	if len(ops) == 0 {
		return nil
	}
	c.writes.Add(1)
	return c.metrics.Transact(ctx, c.ovs, ops)
}

// Stats returns the counters of this client's write transactions.
func (c *Client) Stats() ovn.Stats {
	return c.metrics.Stats()
}

// root returns the Open_vSwitch table's single row.
func (c *Client) root(ctx context.Context) (*vswitchdb.OpenvSwitch, error) {
	var rows []*vswitchdb.OpenvSwitch
	if err := c.ovs.List(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read Open_vSwitch row from cache: %w", err)
	}
	switch len(rows) {
	case 0:
		return nil, fmt.Errorf("no Open_vSwitch row (database not initialized, see ovs-vsctl init): %w", ovn.ErrNotFound)
	case 1:
		return rows[0], nil
	}
	return nil, fmt.Errorf("%w: %d Open_vSwitch rows", ovn.ErrConflict, len(rows))
}

// The name lookups rely on the schema's unique name indexes; nil means no such row.

func (c *Client) bridgeByName(ctx context.Context, name string) (*vswitchdb.Bridge, error) {
	br := &vswitchdb.Bridge{Name: name}
	return lookup(ctx, c, br, "bridge")
}

func (c *Client) portByName(ctx context.Context, name string) (*vswitchdb.Port, error) {
	return lookup(ctx, c, &vswitchdb.Port{Name: name}, "port")
}

func (c *Client) interfaceByName(ctx context.Context, name string) (*vswitchdb.Interface, error) {
	return lookup(ctx, c, &vswitchdb.Interface{Name: name}, "interface")
}

func lookup[T any, PT interface {
	*T
	model.Model
}](ctx context.Context, c *Client, m PT, what string) (PT, error) {
	err := c.ovs.Get(ctx, m)
	switch {
	case err == client.ErrNotFound:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s from cache: %w", what, err)
	}
	return m, nil
}
