package node

import (
	"context"
	"fmt"
)

// mirrorCleanup is what the mirror's cleanup needs (vswitch.Client has it; a cleanup fake
// without it skips the mirror).
type mirrorCleanup interface {
	MirrorOutputs(ctx context.Context, bridge string) ([]string, error)
	DeleteMirrors(ctx context.Context, bridge string) error
}

// mirrors removes edgeovn's mirror on br-int and its output port (mirror0).
func (c *cleaner) mirrors(ctx context.Context, db CleanupOVS, do bool) {
	m, ok := db.(mirrorCleanup)
	if !ok {
		return
	}
	outs, err := m.MirrorOutputs(ctx, Bridge)
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	if len(outs) == 0 {
		return
	}
	verb := "would remove"
	if do {
		if err := m.DeleteMirrors(ctx, Bridge); err != nil {
			c.errs = append(c.errs, err)
			return
		}
		verb = "removed"
	}
	for _, name := range outs {
		fmt.Fprintln(c.out, verb, fmt.Sprintf("mirror to ovs port %s on %s", name, Bridge))
	}
}
