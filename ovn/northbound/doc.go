// Package northbound writes edgeovn's part of the OVN northbound database: the cluster
// router and join switch (EnsureCluster; dual stack with JoinDualCIDR), one logical switch per
// Subnet attached to the router at its gateway(s) (EnsureSubnet), an underlay Subnet's localnet port with its provider and tag
// and, without logicalGateway, no router port (EnsureLocalnet), pod logical switch ports (EnsurePodPort, EnsurePodPorts,
// DeletePodPort, PodPorts; a StatefulSet pod's port is marked with its StatefulSet,
// StatefulSetKey), a node's join port and distributed-gateway policies (EnsureNode: one pod
// address set and one reroute per family the node has a join IP of), static routes and router
// policies (EnsureStaticRoute, EnsureRouterPolicy), and Services' load balancers as members of
// one group (EnsureLoadBalancerGroup, SyncLoadBalancers). EnsureACLGroup makes one owner's
// port groups, ACLs and address sets exactly a spec's; EnsureSwitchACLs does the same for one
// owner's ACLs on a logical switch (a private Subnet's), leaving the switch's other ACLs alone.
// A custom VPC's router (EnsureVpcRouter, owned by kind Vpc) carries exactly its Vpc's static
// routes and policies (EnsureVpc: one transaction adds, repairs and removes them; VpcRouters
// lists the routers for the clean-up of Vpcs gone while no controller ran).
// DeleteOwned deletes every edgeovn row of one owner (a deleted pod or node).
// BumpNBCfg increments NB_Global's nb_cfg, so ovn-controllers report when they have installed
// what northbound holds (`ovn-nbctl --wait=hv`'s mechanism).
//
// Builders append operations (the unexported *Ops functions take and return the slice), so
// one logical change, such as a node, is one transaction. Lookups go through indexes: the
// schema's name indexes, client indexes on router and load balancer names (set up by
// Connect), and _uuid for the rows a parent references; only DeleteOwned reads whole tables.
// Logical switches, which reference every pod port, are read from the cache without a copy
// (shared rows, never modified), and which switch holds a port is answered by an index kept
// per switch row version (switchports.go), so a re-sync of a pod costs the same with 10 pods
// or 10,000.
//
// Invariants: every row it creates carries ovn.OwnedBy tags and it never changes or deletes a
// row without them (ovn.ErrNotOwned); the one exception is BumpNBCfg's increment of the shared
// nb_cfg counter, a mutation that keeps every other client's increments. Each call reads the
// client's cache, computes the difference to the desired rows, and commits it as one
// transaction whose every result is checked; when nothing differs it writes nothing. Inserts
// are guarded by wait operations on the names they create and attachments by wait operations on
// the parents they touch, so a stale cache yields ovn.ErrConflict (retry) rather than a
// duplicate or an orphan. Bad input is rejected with ovn.ErrInvalid before anything is read or
// written.
//
// DeleteOwned never deletes a row without edgeovn's tags; it removes references to its own rows from
// foreign parents, and keeps an undesired switch, router or port group that still holds a
// row that stays (a foreign port, say).
//
// Concurrency: a Client is safe for concurrent use. Two concurrent calls for the same rows
// may both build the same insert; the guard makes one of them fail with ovn.ErrConflict.
package northbound
