// Package services is the controller role's Services feature: it turns Services and their
// EndpointSlices into OVN load balancers (services.go) in the cluster's load balancer group,
// which every edgeovn switch and join carry, so the DNAT happens in OVN on the client's own
// switch and replies are un-NATed there too. It owns the load balancers owned by a Service
// (external_ids, kind Service), the template variables of its internalTrafficPolicy Local
// Services, and its queue of Service keys. It shares with the core only what its Request
// carries: the northbound client, the logger and the metrics; its listers come from the
// term's informers.
//
// Desired state is pure (loadbalancers.go, endpoints.go, local.go): one load balancer per
// Service and protocol ("svc:<namespace>/<name>:<protocol>"), each ClusterIP and port a VIP
// whose backends are the endpoints kube-proxy would use (the ready ones, else the serving
// terminating ones); a VIP without endpoints stays, with no backends, and rejects. Headless
// and ExternalName Services have none. ClientIP affinity carries its timeout. An
// internalTrafficPolicy Local Service is a template load balancer per protocol and family
// whose backends are a template variable each chassis sets to its own node's endpoints.
// External IPs and VIP-mode LoadBalancer IPs (external.go) are more VIPs of the Service's
// (cluster-wide) load balancers, so pods reach them in OVN with their own address; one in
// the pod, join or service network (Request.Reserved) or a special range is left out and
// reported once as a ServiceIPRefused Warning Event (refusals.go). A LoadBalancer IP whose
// loadBalancerSourceRanges leave a pod network (Request.PodNetworks) out is no VIP for pods
// (sourceranges.go): OVN cannot filter by source, so pods' packets to it go to their host,
// whose rules apply the ranges; a range entry that does not parse is a SourceRangeInvalid
// Warning Event, the other entries kept. Traffic from outside to these addresses is the node
// role's (agent/node, without kube-proxy).
//
// Invariants: variables are written before the load balancers that use them and removed
// after; a Service already right costs no write; a load balancer name held by a row edgeovn
// does not own is logged and left alone. Reconcile, at the start of a term, deletes the load
// balancers of Services gone while no controller ran and the template variables of nodes gone.
package services
