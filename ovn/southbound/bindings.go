package southbound

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/sbdb"
)

// Dial connects to the southbound database without monitoring anything: the client keeps no
// cache (Chassis finds nothing through it) and serves BindingsOn, whose selects read three
// columns of the rows bound to one chassis. A node reads its own bindings this way, so that a
// host on a large cluster never holds the cluster's Port_Binding or Chassis tables.
func Dial(ctx context.Context, req ovn.ConnectRequest) (*Client, error) {
	dbModel, err := sbdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("build southbound model: %w", err)
	}
	sb, err := ovn.Dial(ctx, req, dbModel)
	if err != nil {
		return nil, err
	}
	return &Client{sb: sb}, nil
}

// portBindingTable is read with raw selects: the generated model (package sbdb) has no
// Port_Binding, so that Connect's monitor never copies the table; libovsdb checks the selects
// against the server's own schema, which has it.
const portBindingTable = "Port_Binding"

// Bindings are the logical ports whose Port_Binding names one chassis, with their up column:
// a logical port missing from it is bound elsewhere or nowhere.
type Bindings struct {
	// Registered is false when no chassis of that name is in the southbound database (its
	// ovn-controller has not registered yet, or was removed): then nothing is bound to it.
	Registered bool
	Up         map[string]bool // logical_port -> up
}

// UpHere reports whether lsp's Port_Binding is on this chassis and up.
func (b Bindings) UpHere(lsp string) bool { return b.Up[lsp] }

// BindingsOn reads the Port_Bindings on chassis (by its name, the system-id) in one
// transaction of two selects: the chassis's row, then the bindings whose chassis column is
// that row. The server evaluates the conditions; only logical_port and up of this chassis's
// rows come back. Works on a Dial or Connect client.
func (c *Client) BindingsOn(ctx context.Context, chassis string) (Bindings, error) {
	if chassis == "" {
		return Bindings{}, fmt.Errorf("read port bindings: %w: empty chassis name", ovn.ErrInvalid)
	}
	uuid, ok, err := c.chassisUUID(ctx, chassis)
	if err != nil || !ok {
		return Bindings{Registered: ok}, err
	}
	sel := ovsdb.Operation{Op: ovsdb.OperationSelect, Table: portBindingTable,
		Where:   []ovsdb.Condition{ovsdb.NewCondition("chassis", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: uuid})},
		Columns: []string{"logical_port", "up"}}
	rows, err := c.selectRows(ctx, sel)
	if err != nil {
		return Bindings{}, fmt.Errorf("read port bindings of chassis %s: %w", chassis, err)
	}
	b := Bindings{Registered: true, Up: make(map[string]bool, len(rows))}
	for _, r := range rows {
		if lsp, ok := r["logical_port"].(string); ok {
			b.Up[lsp] = optionalTrue(r["up"])
		}
	}
	return b, nil
}

// chassisUUID is the _uuid of the Chassis row named name.
func (c *Client) chassisUUID(ctx context.Context, name string) (string, bool, error) {
	rows, err := c.selectRows(ctx, ovsdb.Operation{Op: ovsdb.OperationSelect, Table: sbdb.ChassisTable,
		Where: []ovsdb.Condition{ovsdb.NewCondition("name", ovsdb.ConditionEqual, name)}, Columns: []string{"_uuid"}})
	if err != nil {
		return "", false, fmt.Errorf("read chassis %s: %w", name, err)
	}
	if len(rows) == 0 {
		return "", false, nil
	}
	u, ok := rows[0]["_uuid"].(ovsdb.UUID)
	if !ok {
		return "", false, fmt.Errorf("read chassis %s: _uuid is %T", name, rows[0]["_uuid"])
	}
	return u.GoUUID, true, nil
}

func (c *Client) selectRows(ctx context.Context, op ovsdb.Operation) ([]ovsdb.Row, error) {
	results, err := c.sb.Transact(ctx, op)
	if err == nil {
		_, err = ovsdb.CheckOperationResults(results, []ovsdb.Operation{op})
	}
	if err != nil {
		return nil, err
	}
	return results[0].Rows, nil
}

// optionalTrue reads an optional boolean column (a set of at most one): true only when set
// and true.
func optionalTrue(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case ovsdb.OvsSet:
		return len(v.GoSet) == 1 && v.GoSet[0] == true
	}
	return false
}
