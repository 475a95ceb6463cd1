package southbound

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ovn-org/libovsdb/client"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/sbdb"
)

// Client reads chassis registrations from the southbound database.
type Client struct{ sb client.Client }

// Chassis is one registered chassis (an ovn-controller).
type Chassis struct {
	Name     string // its system-id
	Hostname string
	Encaps   []Encap
}

// Encap is one tunnel endpoint of a chassis.
type Encap struct {
	Type string // geneve, vxlan, stt
	IP   string
}

// Connect connects to the southbound database and returns once its chassis are cached.
func Connect(ctx context.Context, req ovn.ConnectRequest) (*Client, error) {
	dbModel, err := sbdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("build southbound model: %w", err)
	}
	sb, err := ovn.Connect(ctx, req, dbModel)
	if err != nil {
		return nil, err
	}
	return &Client{sb: sb}, nil
}

// Close disconnects.
func (c *Client) Close() { c.sb.Close() }

// Chassis returns the chassis registered as name; ok is false when there is none.
func (c *Client) Chassis(ctx context.Context, name string) (ch Chassis, ok bool, err error) {
	var rows []*sbdb.Chassis
	if err := c.sb.WhereCache(func(r *sbdb.Chassis) bool { return r.Name == name }).List(ctx, &rows); err != nil {
		return Chassis{}, false, fmt.Errorf("list chassis %s from cache: %w", name, err)
	}
	if len(rows) == 0 {
		return Chassis{}, false, nil
	}
	ch = Chassis{Name: rows[0].Name, Hostname: rows[0].Hostname}
	for _, uuid := range rows[0].Encaps {
		e := &sbdb.Encap{UUID: uuid}
		if err := c.sb.Get(ctx, e); err != nil {
			return Chassis{}, false, fmt.Errorf("read encap %s of chassis %s: %w", uuid, name, err)
		}
		ch.Encaps = append(ch.Encaps, Encap{Type: e.Type, IP: e.IP})
	}
	slices.SortFunc(ch.Encaps, func(a, b Encap) int {
		if a.Type != b.Type {
			return strings.Compare(a.Type, b.Type)
		}
		return strings.Compare(a.IP, b.IP)
	})
	return ch, true, nil
}
