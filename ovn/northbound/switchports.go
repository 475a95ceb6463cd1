package northbound

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// Logical switches are read from the cache without copying them. A pod switch references
// every one of its ports, and libovsdb's lookups copy each row they return: a re-sync of each
// pod that copied its switch (twice) was quadratic in the pods, the bulk of a restart's work
// with 1,000 pods. The cache never changes a row in place (an update stores a new copy, which
// libovsdb documents for RowsShallow), so a row read here keeps the values it was read with.
// Such a row is shared: nothing may modify it.

// switchRows returns the cache's logical switches as they are now, shared (read-only).
func (c *Client) switchRows() ([]*nbdb.LogicalSwitch, error) {
	tc := c.nb.Cache()
	if tc == nil {
		return nil, fmt.Errorf("read logical switches from cache: client closed")
	}
	t := tc.Table(nbdb.LogicalSwitchTable)
	if t == nil {
		return nil, fmt.Errorf("read logical switches from cache: table %s not monitored", nbdb.LogicalSwitchTable)
	}
	rows := t.RowsShallow()
	out := make([]*nbdb.LogicalSwitch, 0, len(rows))
	for _, m := range rows {
		sw, ok := m.(*nbdb.LogicalSwitch)
		if !ok {
			return nil, fmt.Errorf("read logical switches from cache: row of type %T", m)
		}
		out = append(out, sw)
	}
	return out, nil
}

// switchByName returns the switch called name from the cache, shared (read-only), or nil when
// there is none; more than one is ovn.ErrConflict.
func (c *Client) switchByName(_ context.Context, name string) (*nbdb.LogicalSwitch, error) {
	rows, err := c.switchRows()
	if err != nil {
		return nil, err
	}
	var found []*nbdb.LogicalSwitch
	for _, sw := range rows {
		if sw.Name == name {
			found = append(found, sw)
		}
	}
	return one(found, nil, "logical switch", name)
}

// switchesHolding returns the switches whose ports include the port UUID port, shared
// (read-only).
func (c *Client) switchesHolding(_ context.Context, port string) ([]*nbdb.LogicalSwitch, error) {
	rows, err := c.switchRows()
	if err != nil {
		return nil, err
	}
	c.ports.forget(rows)
	var out []*nbdb.LogicalSwitch
	for _, sw := range rows {
		if c.ports.holds(sw, port) {
			out = append(out, sw)
		}
	}
	return out, nil
}

// portIndex answers whether a switch holds a port, in constant time for a switch row that has
// not changed since it was last asked about: a restart's re-sync asks about every port of an
// unchanged switch. Each switch row version gets a set of its ports at its second question;
// its first is answered by a scan of the row's references (no allocation), so a row that
// changes between questions (a burst of new ports) costs a scan, as before, never a set
// built for nothing more than once per version.
type portIndex struct {
	mu       sync.Mutex
	bySwitch map[string]*indexedSwitch // switch UUID
}

// indexedSwitch is one version of a switch row, as the index knows it.
type indexedSwitch struct {
	row   *nbdb.LogicalSwitch
	asked int
	ports map[string]struct{} // nil until the version's second question
}

// holds says whether sw, a row as switchRows returns it, references the port UUID port.
func (x *portIndex) holds(sw *nbdb.LogicalSwitch, port string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.bySwitch == nil {
		x.bySwitch = map[string]*indexedSwitch{}
	}
	e := x.bySwitch[sw.UUID]
	if e == nil || e.row != sw {
		e = &indexedSwitch{row: sw}
		x.bySwitch[sw.UUID] = e
	}
	e.asked++
	if e.ports == nil && e.asked >= 2 {
		e.ports = make(map[string]struct{}, len(sw.Ports))
		for _, p := range sw.Ports {
			e.ports[p] = struct{}{}
		}
	}
	if e.ports != nil {
		_, ok := e.ports[port]
		return ok
	}
	return slices.Contains(sw.Ports, port)
}

// forget drops the versions of switches that are no longer in rows.
func (x *portIndex) forget(rows []*nbdb.LogicalSwitch) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.bySwitch) <= len(rows) {
		return
	}
	live := make(map[string]bool, len(rows))
	for _, sw := range rows {
		live[sw.UUID] = true
	}
	for uuid := range x.bySwitch {
		if !live[uuid] {
			delete(x.bySwitch, uuid)
		}
	}
}
