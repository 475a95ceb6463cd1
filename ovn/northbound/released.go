package northbound

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// ReleasedKeyPrefix starts the external_ids key of an address released on a switch; the
// value is the release time in Unix nanoseconds.
const ReleasedKeyPrefix = "edgeovn-released-"

// ReleasedKept is how many of the most recent releases a switch keeps: enough that the
// addresses a new leader must not hand out first are known, bounded so the row stays small.
const ReleasedKept = 512

// ReleasedAddr is an address given back on a switch, and when.
type ReleasedAddr struct {
	IP netip.Addr
	At time.Time
}

// RecordReleased notes releases in the switch's external_ids, in one transaction: the order
// in which addresses were released then outlives the host that released them (the IPAM
// database is that host's alone), so the next leader, on any host, reuses them in the same
// order and not before never-used ones. Beyond ReleasedKept, the oldest records are dropped.
// Mutations, not an update: two writers never lose each other's keys.
func (c *Client) RecordReleased(ctx context.Context, switchName string, recs []ReleasedAddr) error {
	if len(recs) == 0 {
		return nil
	}
	sw, err := c.ownedSwitch(ctx, switchName)
	if err != nil {
		return fmt.Errorf("record released addresses on %s: %w", switchName, err)
	}
	del, ins := releasedMutations(sw.ExternalIDs, recs)
	op := ovsdb.Operation{
		Op:    ovsdb.OperationMutate,
		Table: nbdb.LogicalSwitchTable,
		Where: []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: sw.UUID})},
		Mutations: []ovsdb.Mutation{
			*ovsdb.NewMutation("external_ids", ovsdb.MutateOperationDelete, ovsdb.OvsSet{GoSet: del}),
			*ovsdb.NewMutation("external_ids", ovsdb.MutateOperationInsert, ovsdb.OvsMap{GoMap: ins}),
		},
	}
	if err := c.commit(ctx, []ovsdb.Operation{op}); err != nil {
		return fmt.Errorf("record %d released addresses on %s: %w", len(recs), switchName, err)
	}
	return nil
}

// releasedMutations returns the keys to delete (the records' own, so insert replaces them, and
// the oldest beyond ReleasedKept) and the map to insert.
func releasedMutations(cur map[string]string, recs []ReleasedAddr) ([]any, map[any]any) {
	ins := make(map[any]any, len(recs))
	var del []any
	for _, r := range recs {
		k := ReleasedKeyPrefix + r.IP.String()
		ins[k] = strconv.FormatInt(r.At.UnixNano(), 10)
		del = append(del, k)
	}
	all := parseReleased(cur)
	for _, r := range recs {
		all = slices.DeleteFunc(all, func(o ReleasedAddr) bool { return o.IP == r.IP })
	}
	if extra := len(all) + len(recs) - ReleasedKept; extra > 0 {
		for _, r := range all[:min(extra, len(all))] { // all is oldest first
			del = append(del, ReleasedKeyPrefix+r.IP.String())
		}
	}
	return del, ins
}

// Released returns the releases recorded on the switch, least recent first.
func (c *Client) Released(ctx context.Context, switchName string) ([]ReleasedAddr, error) {
	sw, err := c.switchByName(ctx, switchName)
	if err != nil {
		return nil, fmt.Errorf("read released addresses of %s: %w", switchName, err)
	}
	if sw == nil {
		return nil, nil
	}
	return parseReleased(sw.ExternalIDs), nil
}

// parseReleased reads the records in external_ids, least recent first; malformed ones (not
// edgeovn's to trust) are skipped.
func parseReleased(ids map[string]string) []ReleasedAddr {
	var out []ReleasedAddr
	for k, v := range ids {
		s, ok := strings.CutPrefix(k, ReleasedKeyPrefix)
		if !ok {
			continue
		}
		ip, err := netip.ParseAddr(s)
		ns, nerr := strconv.ParseInt(v, 10, 64)
		if err != nil || nerr != nil {
			continue
		}
		out = append(out, ReleasedAddr{IP: ip, At: time.Unix(0, ns).UTC()})
	}
	slices.SortFunc(out, func(a, b ReleasedAddr) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return a.IP.Compare(b.IP)
	})
	return out
}
