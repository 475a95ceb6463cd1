package main

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/model"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/ovn"
)

// rowCounts is a number of rows by table.
type rowCounts map[string]int

// nbRows counts the rows of every table in the northbound cache (the bench's client monitors
// all of edgeovn's model's tables).
func nbRows(nb client.Client) rowCounts {
	c := rowCounts{}
	tc := nb.Cache()
	for _, table := range tc.Tables() {
		c[table] = tc.Table(table).Len()
	}
	return c
}

// minus is c - before, by table, the tables whose count changed only.
func (c rowCounts) minus(before rowCounts) rowCounts {
	d := rowCounts{}
	for table, n := range c {
		if n != before[table] {
			d[table] = n - before[table]
		}
	}
	for table, n := range before {
		if _, ok := c[table]; !ok && n != 0 {
			d[table] = -n
		}
	}
	return d
}

func (c rowCounts) total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// tablesOf lists, sorted, the tables counted in any of cs.
func tablesOf(cs ...rowCounts) []string {
	set := map[string]bool{}
	for _, c := range cs {
		for t := range c {
			set[t] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// logicalFlow is what the bench reads of SB's Logical_Flow: it only counts the rows, and
// monitors one small column (the monitor sends the columns the model has, no more).
type logicalFlow struct {
	UUID     string `ovsdb:"_uuid"`
	Priority int    `ovsdb:"priority"`
}

// sbCounter is a southbound client whose cache holds the Logical_Flow table.
type sbCounter = client.Client

// connectSB opens a southbound client monitoring Logical_Flow's priority column only.
func connectSB(ctx context.Context, endpoint string) (sbCounter, error) {
	m, err := model.NewClientDBModel("OVN_Southbound", map[string]model.Model{"Logical_Flow": &logicalFlow{}})
	if err != nil {
		return nil, err
	}
	sb, err := ovn.Dial(ctx, ovn.ConnectRequest{Endpoints: harness.SplitEndpoints(endpoint)}, m)
	if err != nil {
		return nil, fmt.Errorf("bench southbound client: %w", err)
	}
	lf := &logicalFlow{}
	if _, err := sb.Monitor(ctx, sb.NewMonitor(client.WithTable(lf, &lf.Priority))); err != nil {
		sb.Close()
		return nil, fmt.Errorf("bench southbound monitor of Logical_Flow: %w", err)
	}
	return sb, nil
}

// sbFlows counts the logical flows in the southbound cache.
func sbFlows(sb sbCounter) int { return sb.Cache().Table("Logical_Flow").Len() }
