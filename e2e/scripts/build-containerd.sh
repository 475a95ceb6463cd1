#!/bin/sh
# Builds containerd 2.x (the daemon, its runc shim and ctr) from the Go module proxy into a
# cache folder, once. usage: build-containerd.sh OUTDIR   (env CONTAINERD_VERSION, default 2.2.1)
#
# OUTDIR/containerd, OUTDIR/containerd-shim-runc-v2 and OUTDIR/ctr are kept while each one's
# .version file names the wanted version. Static (CGO off, as containerd's own static release
# and k3s build them; btrfs and the other cgo snapshotters drop out); the shim gets no_grpc as
# in containerd's Makefile. It runs containers with Debian's runc (install-deps.sh installs
# it). Cold: about 1.5 minutes on 2 cores.
set -eu
version="${CONTAINERD_VERSION:-2.2.1}"
out="$(mkdir -p "${1:?usage: $0 OUTDIR}" && cd "$1" && pwd)"
mod="github.com/containerd/containerd/v2"
bins="containerd containerd-shim-runc-v2 ctr"

missing=""
for b in $bins; do
	if [ -x "$out/$b" ] && [ "$(cat "$out/$b.version" 2>/dev/null)" = "$version" ]; then
		continue
	fi
	missing="$missing $b"
done
[ -n "$missing" ] || { echo "containerd v$version present in $out: $bins"; exit 0; }

echo "building$missing v$version into $out (cold: about 1.5 minutes on 2 cores)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ldflags="-X $mod/version.Version=v$version -X $mod/version.Package=$mod"
tags="urfave_cli_no_docs osusergo netgo static_build"
for b in $missing; do
	t="$tags"
	[ "$b" = containerd-shim-runc-v2 ] && t="$t no_grpc"
	GOBIN="$work" CGO_ENABLED=0 go install -trimpath -tags "$t" -ldflags "$ldflags" "$mod/cmd/$b@v$version"
	mv "$work/$b" "$out/$b.tmp"
	mv "$out/$b.tmp" "$out/$b"
	echo "$version" >"$out/$b.version"
	echo "built $out/$b"
done
