// Package images holds the programs the e2e suite's real node runs as containers (pause, the
// sandbox process; testserver, the pods' workload) and builds them into OCI image tars for
// `ctr images import`, so that the node needs no registry.
package images
