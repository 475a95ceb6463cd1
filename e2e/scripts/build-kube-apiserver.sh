#!/bin/sh
# Builds kube-apiserver from the Go module proxy into a cache folder, once.
# usage: build-kube-apiserver.sh OUTDIR   (env KUBE_VERSION, default 1.34.4)
set -eu
version="${KUBE_VERSION:-1.34.4}"
staging="0.${version#1.}"
out="$(mkdir -p "${1:?usage: $0 OUTDIR}" && cd "$1" && pwd)"
bin="$out/kube-apiserver"
if [ -x "$bin" ] && [ "$(cat "$out/kube-apiserver.version" 2>/dev/null)" = "$version" ]; then
	exit 0
fi
echo "building kube-apiserver v$version into $out (cold: about 7 minutes on 2 cores)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
go mod init edgeovn.local/kubebuild >/dev/null 2>&1
modfile="$(go mod download -json "k8s.io/kubernetes@v$version" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
# Every staging repository the kubernetes module replaces locally comes from the proxy instead.
for repo in $(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$modfile"); do
	go mod edit -replace "$repo=$repo@v$staging"
done
go mod edit -require "k8s.io/kubernetes@v$version"
cat > tools.go <<'GO'
//go:build tools

package kubebuild

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
go mod tidy -e >/dev/null 2>&1 || true
CGO_ENABLED=0 go build -trimpath -o "$bin.tmp" \
	-ldflags "-X k8s.io/component-base/version.gitVersion=v$version" \
	k8s.io/kubernetes/cmd/kube-apiserver
mv "$bin.tmp" "$bin"
echo "$version" > "$out/kube-apiserver.version"
echo "built $bin"
