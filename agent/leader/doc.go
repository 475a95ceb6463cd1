// Package leader decides which host runs the controller role: it campaigns for the
// coordination.k8s.io Lease while this host is eligible, runs the role (Request.Lead) for as
// long as it holds the Lease, and gives the Lease up when the role stops.
//
// Why a host did not take the Lease, file by file:
//   - eligibility.go: a host is eligible only while OVN northbound answers and the API server
//     grants every verb the controller role uses (rights.go lists them, from the features on;
//     packaging/rbac.yaml grants them). The reason it is not is logged ("not campaigning for
//     the controller Lease") and shown as the state "ineligible: ..." on /controller.
//   - recheck.go: eligibility is asked before each campaign and every RetryPeriod while
//     campaigning or leading; two failures in a row give the Lease up.
//   - rightsrecord.go: a grant of the rights is trusted for a minute, also by the next process
//     on the host (recorded in Config.RightsRecord, bound to the kubeconfig and the rights).
//   - lease.go: the Lease rules, client-go's (expiry judged by when this host saw the record
//     change, renewal within RenewDeadline), in edgeovn's own elector: client-go's package
//     links every API group.
//   - campaign.go: the campaign loop (Run); after a term whose role failed, a pause (1 s
//     doubling to 30 s) before the next campaign, so another host may take over.
//   - term.go: the gate that keeps terms apart.
//
// Invariants: terms never overlap in one process (the next campaign starts only once the
// previous term's Lead has returned); the Lease is released only after the term stopped; a
// host that is not eligible never writes the Lease. The package does not import package agent:
// agent fills Config from its own (agent/leaderconfig.go).
//
// Concurrency: Run blocks until ctx ends; one campaign, and within it one elector, at a time.
package leader
