#!/bin/sh
# Builds Kubernetes components from the Go module proxy into a cache folder, each once.
# usage: build-kube.sh OUTDIR [COMPONENT...]   (env KUBE_VERSION, default 1.34.4)
#   COMPONENT: kube-apiserver, kube-controller-manager, kube-proxy, kubelet, kube-scheduler (the
#   default: the five make deps needs; the harness's TestClusterControllers runs the scheduler),
#   kubectl, agnhost (the upstream test image's binary) and e2e.test (the upstream e2e binary;
#   these three and kube-scheduler are make conformance's)
#
# OUTDIR/<component> is kept while OUTDIR/<component>.version names the wanted version; the
# ones missing are built together in one throwaway module that requires k8s.io/kubernetes
# with every staging repository (k8s.io/api, client-go, ...) taken from the proxy at the
# matching v0.x tag. Cold, kube-apiserver takes about 7 minutes on 2 cores; once its
# packages are in the Go build cache, each other component takes well under a minute, but
# e2e.test (go test -c k8s.io/kubernetes/test/e2e) about 10 minutes on 2 busy cores.
set -eu
version="${KUBE_VERSION:-1.34.4}"
staging="0.${version#1.}"
out="$(mkdir -p "${1:?usage: $0 OUTDIR [COMPONENT...]}" && cd "$1" && pwd)"
shift
[ $# -gt 0 ] || set -- kube-apiserver kube-controller-manager kube-proxy kubelet kube-scheduler

# pkg COMPONENT: the Go package that builds it.
pkg() {
	case "$1" in
	agnhost) echo k8s.io/kubernetes/test/images/agnhost ;;
	e2e.test) echo k8s.io/kubernetes/test/e2e ;;
	*) echo "k8s.io/kubernetes/cmd/$1" ;;
	esac
}

missing=""
for c in "$@"; do
	case "$c" in
	kube-apiserver | kube-controller-manager | kube-proxy | kubelet | kube-scheduler | kubectl | agnhost | e2e.test) ;;
	*) echo "build-kube: unknown component $c" >&2; exit 2 ;;
	esac
	if [ -x "$out/$c" ] && [ "$(cat "$out/$c.version" 2>/dev/null)" = "$version" ]; then
		continue
	fi
	missing="$missing $c"
done
[ -n "$missing" ] || { echo "kubernetes v$version components present in $out:" "$@"; exit 0; }

echo "building$missing v$version into $out (cold: about 7 minutes on 2 cores; e2e.test about 10)"
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
{
	printf '//go:build tools\n\npackage kubebuild\n\nimport (\n'
	for c in $missing; do printf '\t_ "%s"\n' "$(pkg "$c")"; done
	# e2e.test's test files import the test packages; tidy must see them to resolve their modules.
	case "$missing" in *e2e.test*)
		printf '\t_ "k8s.io/kubernetes/test/e2e/network"\n\t_ "k8s.io/kubernetes/test/e2e/network/netpol"\n' ;;
	esac
	printf ')\n'
} >tools.go
go mod tidy -e >/dev/null 2>&1 || true
ldflags="-X k8s.io/component-base/version.gitVersion=v$version"
pkgs=""
for c in $missing; do [ "$c" = e2e.test ] || pkgs="$pkgs $(pkg "$c")"; done
mkdir bin
if [ -n "$pkgs" ]; then
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	CGO_ENABLED=0 go build -trimpath -o bin/ -ldflags "$ldflags" $pkgs
fi
case "$missing" in *e2e.test*)
	CGO_ENABLED=0 go test -c -vet=off -trimpath -o bin/e2e.test -ldflags "$ldflags" "$(pkg e2e.test)" ;;
esac
for c in $missing; do
	mv "bin/$c" "$out/$c.tmp"
	mv "$out/$c.tmp" "$out/$c"
	echo "$version" >"$out/$c.version"
	echo "built $out/$c"
done
