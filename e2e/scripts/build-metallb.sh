#!/bin/sh
# Builds MetalLB's controller and speaker from the Go module proxy into a cache folder, once,
# with the CRDs they need beside them (the e2e LoadBalancer test runs them as processes against
# the rig's API server, L2 mode).
# usage: build-metallb.sh OUTDIR   (env METALLB_VERSION, default 0.14.9)
# Writes OUTDIR/metallb-controller, OUTDIR/metallb-speaker and OUTDIR/metallb-crds.yaml (every
# CRD of config/crd/bases: the controller's and speaker's caches watch all of them).
#
# `go install ...@vX` is refused here (it reads the module's version list, which the proxy does
# not serve), so the build goes through a throwaway module that requires the exact version; its
# own go.mod pins the Kubernetes libraries it was released with (v0.31), apart from edgeovn's.
set -eu
version="${METALLB_VERSION:-0.14.9}"
out="$(mkdir -p "${1:?usage: $0 OUTDIR}" && cd "$1" && pwd)"
stamp="$out/metallb.version"
if [ -x "$out/metallb-controller" ] && [ -x "$out/metallb-speaker" ] && [ -s "$out/metallb-crds.yaml" ] &&
	[ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
	echo "metallb v$version present: $out/metallb-{controller,speaker}"
	exit 0
fi
echo "building metallb v$version into $out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'module m\ngo 1.25.0\nrequire go.universe.tf/metallb v%s\n' "$version" >"$work/go.mod"
for c in controller speaker; do
	(cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$work/metallb-$c" "go.universe.tf/metallb/$c")
done
src="$(cd "$work" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' go.universe.tf/metallb)"
for f in "$src"/config/crd/bases/*.yaml; do
	printf -- '---\n'
	sed '/^---$/d' "$f"
done >"$work/metallb-crds.yaml"
for f in metallb-controller metallb-speaker metallb-crds.yaml; do
	mv "$work/$f" "$out/$f.tmp"
	mv "$out/$f.tmp" "$out/$f"
done
echo "$version" >"$stamp"
echo "built $out/metallb-controller, $out/metallb-speaker, $out/metallb-crds.yaml"
