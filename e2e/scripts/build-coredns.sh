#!/bin/sh
# Builds CoreDNS from the Go module proxy into a cache folder, once.
# usage: build-coredns.sh OUTDIR   (env COREDNS_VERSION, default 1.12.4)
#
# The default build has every plugin the tests use (kubernetes, forward, cache, health,
# ready). Cold: about 10 minutes on 2 cores, mostly its many dependencies.
set -eu
version="${COREDNS_VERSION:-1.12.4}"
out="$(mkdir -p "${1:?usage: $0 OUTDIR}" && cd "$1" && pwd)"
bin="$out/coredns"
if [ -x "$bin" ] && [ "$(cat "$bin.version" 2>/dev/null)" = "$version" ]; then
	echo "coredns v$version present: $bin"
	exit 0
fi
echo "building coredns v$version into $out (cold: about 10 minutes on 2 cores)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
GOBIN="$work" CGO_ENABLED=0 go install -trimpath "github.com/coredns/coredns@v$version"
mv "$work/coredns" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "$version" >"$bin.version"
echo "built $bin"
