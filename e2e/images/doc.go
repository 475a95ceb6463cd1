// Package images holds the programs the e2e suite's real node runs as containers (pause, the
// sandbox process; testserver, the pods' workload; toolbox, the shell and tools of the
// upstream test images) and builds them into OCI image tars for `ctr images import`, so that
// the node needs no registry. BuildUpstream also wraps the binaries the upstream Kubernetes
// e2e tests run (agnhost, built from k8s.io/kubernetes/test/images/agnhost; CoreDNS) into
// images under exactly the names the e2e framework asks for, which are then never pulled.
//
// Invariant: an image's tools are the toolbox's own list; a name linked in an image that the
// toolbox does not implement would fail at run time, and the package's test checks both
// lists agree.
package images
