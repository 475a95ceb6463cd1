package harness

// UnderlayNetns is the namespace of the cluster's underlay bridge (br0, a leg per member):
// a test that impairs the wire between hosts (nftables bridge rules) works there.
func (c *Cluster) UnderlayNetns() string { return c.underlay.netns }
