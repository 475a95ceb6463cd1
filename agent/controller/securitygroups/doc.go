// Package securitygroups is the controller role's SecurityGroups: it applies Kube-OVN's
// kubeovn.io/v1 SecurityGroups (cluster-scoped, field names unchanged) as package secgroup
// translates them, to the pods that name them in ovn.kubernetes.io/security_groups. It owns
// each group's rows in northbound (kind SecurityGroup: its port group "ovn.sg.<name>", its
// address sets and ACLs), its finalizer (edgeovn.io/security-group) and its status (Kube-OVN's
// portGroup, allowSameGroupTraffic, ingressMd5/egressMd5, the last syncs' success; edgeovn's
// conditions Ready, Validated, Error). It shares with the core only what its Request carries
// (the dynamic client, the northbound client, the event recorder, the logger, the metrics, the
// join networks, whether a pod lost its address); its informers are the term's: the groups'
// (kubeapi.Informers.Dynamic) and the pods', on which it adds an index by group name.
//
// A group's unit of work is its name (sync.go): its rules are translated and checked whole
// before anything is written (every field as Kube-OVN validates it, a remoteSecurityGroup that
// must exist; policy pass and tier 1 refused, OVN 23.03 has no tiers), and its port group,
// address sets and ACLs are written in one transaction (northbound.EnsureACLGroup), which also
// removes what the group no longer asks for; a sync that wrote bumps nb_cfg so the nodes purge
// their datapath's flow cache. A refused spec gets Validated/Ready False and Error True naming
// the field, and one Warning Event; the rules applied before stay (read back from northbound),
// or, for a group never applied, only the fence (host allow, neighbour discovery, drop), while
// its members keep following the pods. A pod naming a group that does not exist gets a Warning
// Event (SecurityGroupNotFound) and is in its other groups only, as Kube-OVN. A deleted group
// is held by its finalizer while another group's rule names it (Ready False,
// SecurityGroupInUse); then its rows go. When everything is right nothing is written, so a
// restart or a new leader writes nothing; Reconcile, at the start of a term, syncs every group
// and removes the rows of groups deleted while no controller ran.
//
// Concurrency: one worker syncs groups; the listers are the informers' caches.
package securitygroups
