package controller

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/ipam"
)

// errPoolExhausted: every address of a pod's ip_pool (or the one its StatefulSet ordinal
// gets) is held by another pod. Retried: an address may free up.
var errPoolExhausted = fmt.Errorf("ip pool exhausted: %w", ipam.ErrExhausted)

// allocateAddress gives the pod its address in subnet: the ip_address it pinned, else a free
// entry of its ip_pool, else the next free address (or the one it already holds: a
// StatefulSet's pod re-created). Pins are checked against the subnet before anything is
// taken, so a refusal names the address and why (another subnet's, the gateway, excluded).
func (c *Controller) allocateAddress(ctx context.Context, pod *corev1.Pod, subnet string, pins annotation.Request) (ipam.Allocation, error) {
	return c.allocateFor(ctx, pod, subnet, owner(pod.Namespace+"/"+pod.Name), pins)
}

// allocateFor is allocateAddress for one of the pod's interfaces, its IPAM owner o.
func (c *Controller) allocateFor(ctx context.Context, pod *corev1.Pod, subnet string, o ipam.Owner, pins annotation.Request) (ipam.Allocation, error) {
	req := ipam.Request{Subnet: subnet, Owner: o, IPs: pins.IPs, MAC: pins.MAC}
	switch {
	case len(pins.IPs) > 0:
		if err := c.checkPins(req.Owner, subnet, pins.IPs); err != nil {
			return ipam.Allocation{}, err
		}
	case !pins.Pool.Empty():
		return c.allocateFromPool(ctx, pod, req, pins.Pool)
	}
	return c.ipam.Allocate(ctx, req)
}

// checkPins refuses addresses that could never be o's in subnet; those o already holds (a
// StatefulSet's kept address, excluded since) stay its own.
func (c *Controller) checkPins(o ipam.Owner, subnet string, ips []netip.Addr) error {
	var check []netip.Addr
	for _, ip := range ips {
		if h, held := c.ipam.Owner(subnet, ip); !held || h != o {
			check = append(check, ip)
		}
	}
	return c.ipam.CheckStatic(subnet, check)
}

// allocateFromPool gives the pod the first entry of its ip_pool that no other pod holds; a
// StatefulSet's pod only the entry at its ordinal, as in Kube-OVN. The whole pool is checked
// against the subnet first.
func (c *Controller) allocateFromPool(ctx context.Context, pod *corev1.Pod, req ipam.Request, pool annotation.Pool) (ipam.Allocation, error) {
	if pool.Name != "" {
		return ipam.Allocation{}, fmt.Errorf("%s %q names an IPPool object, which edgeovn does not implement: list the addresses instead (%s: 10.16.0.15,10.16.0.16)",
			annotation.IPPool, pool.Name, annotation.IPPool)
	}
	if err := c.checkPins(req.Owner, req.Subnet, pool.Addrs()); err != nil {
		return ipam.Allocation{}, fmt.Errorf("%s %q: %w", annotation.IPPool, pool.Value, err)
	}
	entries := pool.Entries
	if set, n, ok := statefulSetOf(pod); ok {
		if n >= len(entries) {
			return ipam.Allocation{}, fmt.Errorf("%s %q has %d entries and StatefulSet %s's pods take the entry at their ordinal: ordinal %d has none: %w",
				annotation.IPPool, pool.Value, len(entries), set.Name, n, errPoolExhausted)
		}
		entries = entries[n : n+1]
	}
	if cur, ok := c.ipam.Get(req.Owner); ok && cur.Subnet == req.Subnet {
		entries = heldFirst(entries, cur.IPs)
	}
	var held []string
	for _, e := range entries {
		if h := c.heldByOther(req, e); h != "" {
			held = append(held, h)
			continue
		}
		r := req
		r.IPs = e
		a, err := c.ipam.Allocate(ctx, r)
		if err == nil {
			return a, nil
		}
		if h := c.heldByOther(req, e); h != "" && errors.Is(err, ipam.ErrConflict) {
			held = append(held, h) // taken meanwhile by another worker
			continue
		}
		return ipam.Allocation{}, fmt.Errorf("%s %q: %w", annotation.IPPool, pool.Value, err)
	}
	return ipam.Allocation{}, fmt.Errorf("%s %q: every address is held by another pod (%s): %w",
		annotation.IPPool, pool.Value, podnet.ListSome(held), errPoolExhausted)
}

// heldByOther names an address of entry another owner holds ("10.42.9.1 by ns/pod"), or "".
func (c *Controller) heldByOther(req ipam.Request, entry []netip.Addr) string {
	for _, ip := range entry {
		if h, held := c.ipam.Owner(req.Subnet, ip); held && h != req.Owner {
			return ip.String() + " by " + h.Pod
		}
	}
	return ""
}

// heldFirst moves the entry whose addresses the owner already holds to the front: asking
// again (a retry, a re-created StatefulSet pod) keeps what it has.
func heldFirst(entries [][]netip.Addr, holds []netip.Addr) [][]netip.Addr {
	i := slices.IndexFunc(entries, func(e []netip.Addr) bool {
		return !slices.ContainsFunc(e, func(ip netip.Addr) bool { return !slices.Contains(holds, ip) })
	})
	if i <= 0 {
		return entries
	}
	out := append([][]netip.Addr{entries[i]}, entries[:i]...)
	return append(out, entries[i+1:]...)
}

// waiters are the pods waiting for an address another pod holds (an exhausted ip_pool, a
// pinned address in use): a release queues them all at once, rather than leaving them to
// their backoff.
type waiters struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (w *waiters) add(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = map[string]bool{}
	}
	w.keys[key] = true
}

func (w *waiters) remove(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.keys, key)
}

// wake queues every waiting pod.
func (w *waiters) wake(add func(string)) {
	w.mu.Lock()
	keys := make([]string, 0, len(w.keys))
	for k := range w.keys {
		keys = append(keys, k)
	}
	w.mu.Unlock()
	for _, k := range keys {
		add(k)
	}
}

// pinsText describes what the pod asked for, for its Events.
func pinsText(pins annotation.Request) string {
	var parts []string
	switch {
	case len(pins.IPs) > 0:
		parts = append(parts, fmt.Sprintf("pinned ip %v", pins.IPs))
	case !pins.Pool.Empty():
		parts = append(parts, annotation.IPPool)
	}
	if pins.MAC != nil {
		parts = append(parts, fmt.Sprintf("mac %q", pins.MAC.String()))
	}
	if len(parts) == 0 {
		return "no pinned address"
	}
	return strings.Join(parts, ", ")
}
