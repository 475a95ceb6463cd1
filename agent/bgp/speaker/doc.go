// Package speaker is the BGP speaker process's inside (agent/bgp/cmd/edgeovn-bgp): a GoBGP
// (github.com/osrg/gobgp/v3) server with this host's peers, kept announcing the last full
// state the node role sent (speakerproto.Desired), and reporting its peers and announcement.
// It is the only package that imports GoBGP, so that the edgeovn binary does not link it
// (nor its gRPC, protobuf, viper and friends, whose package init every edgeovn process would
// otherwise pay for, BGP configured or not).
//
// Invariants:
//   - The next hop is left unspecified, so GoBGP sends each peer the session's local
//     address: this host's own address toward that peer, never a pod's (Kube-OVN #4139).
//   - Speaker.Set is a diff against what is announced: applying the same set twice sends
//     nothing; what is no longer wanted is withdrawn at once.
//   - Options that change start a new speaker (the old sessions closed with a Cease).
//   - At stop (the end of the input, SIGTERM, the parent's death by Pdeathsig) without
//     graceful restart every session is closed with a Cease (the peers withdraw at once);
//     with graceful restart nothing is sent and the process exit closes the sessions, so
//     the peers keep the routes for graceful-restart-time (RFC 4724) and drop those not
//     announced again after the restart (End-of-RIB).
//   - A session that does not come up because of TCP MD5 says so (the kernel's MD5
//     counters of this network namespace, counted from the speaker's start).
//
// Concurrency: Serve's loop is the only caller of Speaker.Set and Status.
package speaker
