// Package policies is the controller role's network-policy feature: it applies what package
// agent/netpol translates. It owns edgeovn's policy rows in northbound (each policy's port
// group, address sets and ACLs, each namespace's default-deny port groups, the nodes' join
// address set), their sync queue (namespace keys and ":hosts") and the record of the
// problems last reported per policy. It shares with the core only what its Request carries:
// the northbound client, the event recorder, the logger, the metrics, the cluster's family,
// and whether a pod lost its address to an older claim (such a pod has no port).
//
// It syncs one namespace at a time (sync.go): netpol translates the namespace's
// NetworkPolicies against a snapshot of the listers into port groups, address sets and ACLs,
// and northbound.EnsureACLGroup applies each policy's rows (one transaction per policy), then
// the namespace's default-deny groups, then deletes the rows of its policies that are gone, so
// an allowed connection is never cut by an update; a sync that wrote anything ends with
// northbound.BumpNBCfg, on whose report the nodes purge their userspace datapath's flow cache
// (agent/node, flowcache.go). Any pod or namespace change that a translation reads queues every
// namespace with policies (namespace selectors reach across namespaces); unchanged rows cost no
// write. Its reconcile also deletes the rows of policies deleted while no controller ran. What
// OVN cannot express is reported once per change as a Warning Event (PolicyUnsupported) on the
// policy. With --network-policy=false, RowsOff (off.go) stands in: edgeovn's policy rows are
// deleted at the start of the term.
package policies
