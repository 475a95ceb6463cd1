package ovn

import "github.com/ovn-org/libovsdb/ovsdb"

// The builders below make the guard and reference operations both clients put in their
// transactions. They are written by hand because libovsdb's typed API builds conditions from
// its cache, and a guard must state what the transaction was built from, whatever the cache
// says by the time it commits.

// WaitAbsent fails the transaction (as a timed-out wait, which Transact reports as
// ErrConflict) when a row of table already has column == value. It keeps a stale cache from
// creating a second row with a name that must be unique.
func WaitAbsent(table, column string, value any) ovsdb.Operation {
	timeout := 0
	return ovsdb.Operation{
		Op:      ovsdb.OperationWait,
		Table:   table,
		Timeout: &timeout,
		Where:   []ovsdb.Condition{ovsdb.NewCondition(column, ovsdb.ConditionEqual, value)},
		Columns: []string{column},
		Until:   string(ovsdb.WaitConditionNotEqual),
		Rows:    []ovsdb.Row{{column: value}},
	}
}

// WaitPresent fails the transaction unless row uuid of table still exists with
// column == value. It keeps a transaction from attaching rows to a parent that was deleted or
// renamed after the cache was read.
func WaitPresent(table, uuid, column string, value any) ovsdb.Operation {
	timeout := 0
	return ovsdb.Operation{
		Op:      ovsdb.OperationWait,
		Table:   table,
		Timeout: &timeout,
		Where:   []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: uuid})},
		Columns: []string{column},
		Until:   string(ovsdb.WaitConditionEqual),
		Rows:    []ovsdb.Row{{column: value}},
	}
}

// MutateRefs inserts refs into (or deletes them from) the set column of row uuid. refs may be
// real UUIDs or named UUIDs of rows inserted in the same transaction.
func MutateRefs(table, uuid, column string, mutator ovsdb.Mutator, refs ...string) ovsdb.Operation {
	set := make([]any, len(refs))
	for i, r := range refs {
		set[i] = ovsdb.UUID{GoUUID: r}
	}
	return MutateSet(table, uuid, column, mutator, set...)
}

// MutateSet inserts values into (or deletes them from) the set column of row uuid.
func MutateSet(table, uuid, column string, mutator ovsdb.Mutator, values ...any) ovsdb.Operation {
	return ovsdb.Operation{
		Op:        ovsdb.OperationMutate,
		Table:     table,
		Where:     []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: uuid})},
		Mutations: []ovsdb.Mutation{*ovsdb.NewMutation(column, mutator, ovsdb.OvsSet{GoSet: values})},
	}
}

// DeleteRow deletes row uuid of table.
func DeleteRow(table, uuid string) ovsdb.Operation {
	return ovsdb.Operation{
		Op:    ovsdb.OperationDelete,
		Table: table,
		Where: []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: uuid})},
	}
}
