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
	// bridgeChanged holds a token after a change of the Bridge table.
	bridgeChanged chan struct{}
	// anyChanged holds a token after any change of the Bridge, Port, Interface or
	// Open_vSwitch tables, deletions included (Changes).
	anyChanged chan struct{}
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
		metrics: metrics, datapathChanged: make(chan struct{}, 1), bridgeChanged: make(chan struct{}, 1),
		anyChanged: make(chan struct{}, 1)}
	ovs.Cache().AddEventHandler(&cache.EventHandlerFuncs{
		AddFunc:    func(table string, m model.Model) { c.changed(table, m) },
		UpdateFunc: func(table string, _, m model.Model) { c.changed(table, m) },
		DeleteFunc: func(table string, _ model.Model) { c.deleted(table) },
	})
	return c, nil
}

// changed is the cache event handler; it must not block (libovsdb runs handlers one at a
// time on its event loop).
func (c *Client) changed(table string, m model.Model) {
	c.deleted(table)
	switch table {
	case vswitchdb.InterfaceTable:
		c.interfaceChanged(m)
	case vswitchdb.DatapathTable, vswitchdb.OpenvSwitchTable:
		signal(c.datapathChanged)
	case vswitchdb.BridgeTable:
		signal(c.bridgeChanged)
	}
}

// deleted is the cache's delete handler; changed calls it too: a row of the host's tables
// came, changed or went.
func (c *Client) deleted(table string) {
	switch table {
	case vswitchdb.BridgeTable, vswitchdb.PortTable, vswitchdb.InterfaceTable, vswitchdb.OpenvSwitchTable:
		signal(c.anyChanged)
	}
}

// Changes receives a token after the Bridge, Port, Interface or Open_vSwitch tables changed
// (a bridge's interface got its device, ovn-controller marked a port installed): readiness
// re-evaluates on it instead of waiting for its timer. Tokens coalesce; one reader.
func (c *Client) Changes() <-chan struct{} { return c.anyChanged }

// signal leaves a token in ch unless one is pending already.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
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
