#!/bin/sh
# Builds the Multus thin plugin from the Go module proxy into a cache folder, once, at the
# version Kube-OVN pins (the e2e attachment tests delegate through it).
# usage: build-multus.sh OUTDIR   (env MULTUS_VERSION, default 4.3.0)
#
# `go install ...@v4.3.0` is refused here (it reads the module's version list, which the proxy
# does not serve), so the build goes through a throwaway module that requires the exact version.
set -eu
version="${MULTUS_VERSION:-4.3.0}"
out="$(mkdir -p "${1:?usage: $0 OUTDIR}" && cd "$1" && pwd)"
bin="$out/multus"
if [ -x "$bin" ] && [ "$(cat "$bin.version" 2>/dev/null)" = "$version" ]; then
	echo "multus v$version present: $bin"
	exit 0
fi
echo "building multus v$version into $out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'module m\ngo 1.25.0\nrequire gopkg.in/k8snetworkplumbingwg/multus-cni.v4 v%s\n' "$version" >"$work/go.mod"
(cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$work/multus" gopkg.in/k8snetworkplumbingwg/multus-cni.v4/cmd/multus)
mv "$work/multus" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "$version" >"$bin.version"
echo "built $bin"
