package podqos

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Handles of the root qdisc edgeovn puts on a shaped device (so it knows its own from any
// other) and of the tbf it hangs under a netem.
const (
	rootMajor  = 0xe0e0
	childMajor = 0xe0e1
)

// queueTime is how long a packet may wait in a shaper before it is dropped: the shaper's
// queue holds the burst and this much traffic at the rate.
const queueTimeSec = 0.05

// ErrNoNetem says that this kernel has no netem qdisc (NET_SCH_NETEM): latency, jitter,
// limit and loss cannot be emulated on this host.
var ErrNoNetem = errors.New("this host's kernel has no netem (NET_SCH_NETEM), latency, jitter, limit and loss cannot be applied")

// shape is what one device's egress gets: a rate, and netem above it.
type shape struct {
	Rate  Rate
	Netem Netem
}

// device is a network device in a network namespace ("" the current one).
type device struct {
	Netns, Name string
}

func (d device) String() string {
	if d.Netns == "" {
		return d.Name
	}
	return d.Name + " in " + d.Netns
}

// applyShape makes the device's root qdisc what s asks for: nothing of edgeovn's when s is
// zero (a root qdisc edgeovn did not make is left alone then), a tbf for a rate, a netem
// (with the tbf under it) for netem settings. Applying what is already there changes
// nothing; changed says whether anything was written. ErrNoNetem when the kernel cannot do
// netem: the device may then have lost edgeovn's shaping (the kernel was asked for the
// netem in its place), the caller applies the shape without netem again.
func applyShape(d device, s shape) (changed bool, err error) {
	h, err := handleIn(d.Netns)
	if err != nil {
		return false, err
	}
	defer h.Close()
	link, err := h.LinkByName(d.Name)
	if err != nil {
		return false, fmt.Errorf("find %s: %w", d, err)
	}
	root, err := rootQdisc(h, link)
	if err != nil {
		return false, fmt.Errorf("read qdiscs of %s: %w", d, err)
	}
	ours := false
	if root != nil {
		major, _ := netlink.MajorMinor(root.Attrs().Handle)
		ours = major == rootMajor
	}
	switch {
	case !s.Rate.On() && !s.Netem.On():
		if !ours {
			return false, nil
		}
		if err := h.QdiscDel(root); err != nil {
			return false, fmt.Errorf("remove the shaping of %s: %w", d, err)
		}
		return true, nil
	case s.Netem.On():
		return true, applyNetem(h, link, root, ours, s)
	}
	want := tbf(link, netlink.HANDLE_ROOT, netlink.MakeHandle(rootMajor, 0), s.Rate)
	if ours && sameTbf(root, want) {
		return false, nil
	}
	if err := replaceRoot(h, root, ours, want); err != nil {
		return false, fmt.Errorf("shape %s to %d bit/s: %w", d, s.Rate.BitsPerSec, err)
	}
	return true, nil
}

// replaceRoot puts want at the root: in place when the root is already edgeovn's of the
// same kind, else after removing edgeovn's root of another kind.
func replaceRoot(h *netlink.Handle, root netlink.Qdisc, ours bool, want netlink.Qdisc) error {
	if ours && root.Type() != want.Type() {
		if err := h.QdiscDel(root); err != nil {
			return err
		}
	}
	return h.QdiscReplace(want)
}

func applyNetem(h *netlink.Handle, link netlink.Link, root netlink.Qdisc, ours bool, s shape) error {
	n := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Parent: netlink.HANDLE_ROOT,
		Handle: netlink.MakeHandle(rootMajor, 0)}, netlink.NetemQdiscAttrs{
		Latency: uint32(s.Netem.Latency.Microseconds()), Jitter: uint32(s.Netem.Jitter.Microseconds()),
		Limit: s.Netem.Limit, Loss: float32(s.Netem.LossPercent)})
	if s.Netem.Limit == 0 {
		n.Limit = 1000 // netem's own default
	}
	if err := replaceRoot(h, root, ours, n); err != nil {
		if isUnknownKind(err) {
			return ErrNoNetem
		}
		return fmt.Errorf("add netem to %s: %w", link.Attrs().Name, err)
	}
	if !s.Rate.On() {
		return nil
	}
	child := tbf(link, netlink.MakeHandle(rootMajor, 1), netlink.MakeHandle(childMajor, 0), s.Rate)
	if err := h.QdiscReplace(child); err != nil {
		return fmt.Errorf("shape %s under netem: %w", link.Attrs().Name, err)
	}
	return nil
}

// isUnknownKind: the kernel answers a qdisc kind it was built without with ENOENT.
func isUnknownKind(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EOPNOTSUPP)
}

func tbf(link netlink.Link, parent, handle uint32, r Rate) *netlink.Tbf {
	bytesPerSec := r.BitsPerSec / 8
	return &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Parent: parent, Handle: handle},
		Rate:       bytesPerSec,
		Buffer:     netlink.Xmittime(bytesPerSec, r.BurstBytes),
		Limit:      r.BurstBytes + uint32(min(float64(bytesPerSec)*queueTimeSec, 1<<30)),
	}
}

func sameTbf(q netlink.Qdisc, want *netlink.Tbf) bool {
	t, ok := q.(*netlink.Tbf)
	return ok && t.Rate == want.Rate && t.Limit == want.Limit && t.Buffer+1 >= want.Buffer && t.Buffer <= want.Buffer+1
}

func rootQdisc(h *netlink.Handle, link netlink.Link) (netlink.Qdisc, error) {
	qs, err := h.QdiscList(link)
	if err != nil {
		return nil, err
	}
	for _, q := range qs {
		if q.Attrs().Parent == netlink.HANDLE_ROOT {
			return q, nil
		}
	}
	return nil, nil
}

// handleIn returns a netlink handle in the namespace at path, "" the current one.
func handleIn(path string) (*netlink.Handle, error) {
	if path == "" {
		return netlink.NewHandle()
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return nil, fmt.Errorf("open network namespace %s: %w", path, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("netlink in %s: %w", path, err)
	}
	return h, nil
}
