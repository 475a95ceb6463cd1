// Package ociimage writes container images without a registry: an OCI image layout, as a tar
// that `ctr images import` reads, around one static binary. The image has one uncompressed
// layer holding the binary (and the empty directories a runtime mounts over, and any more
// files or symbolic links the request names), a config whose entrypoint is that binary, and
// the io.containerd.image.name annotation in index.json that names the image on import.
//
// Invariants: the output is a pure function of the request (fixed timestamps and ordering),
// so the same binary always gives the same image digest; every blob's digest and size in the
// manifests match its bytes. The tar is written to a temporary file beside the target and
// renamed into place, so a reader never sees half an image.
package ociimage
