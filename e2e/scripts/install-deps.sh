#!/bin/sh
# Installs what the real-component tests and the demo need, then builds kube-apiserver,
# kube-controller-manager, kube-proxy, kubelet, containerd (with its runc shim and ctr),
# CoreDNS, Multus and MetalLB, and the Debian root the package test boots. The real node runs Debian's runc.
# usage: install-deps.sh [CACHEDIR]   (default <repo>/.cache; the binaries go to CACHEDIR/bin)
#
# Idempotent: installs with apt-get only the Debian/Ubuntu packages that are missing. Services
# those packages would start are kept from starting (policy-rc.d during the install), and any
# daemon that started anyway is stopped by PID: only processes that did not exist before the
# install, never one that was already running. Under systemd, the units of the packages it
# installed are disabled as well, so the system OVS/OVN/etcd never come up behind the tests.
set -eu

packages="openvswitch-switch ovn-central ovn-host iproute2 iputils-ping etcd-server ethtool nftables iptables debootstrap systemd-container rpm runc gcc libc6-dev tcpdump iperf3 frr gobgpd"
daemons="ovsdb-server ovs-vswitchd ovn-northd ovn-controller etcd"

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${1:-$repo/.cache}"

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

daemon_pids() {
	for d in $daemons; do
		pgrep -x "$d" 2>/dev/null || true
	done | sort
}

systemd_is_init() { command -v systemctl >/dev/null 2>&1 && [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; }

# stop_new_daemons BEFORE: stops, by PID, the daemons that were not running before the install.
stop_new_daemons() {
	new="$(daemon_pids | comm -13 "$1" -)"
	[ -n "$new" ] || return 0
	echo "stopping daemons the packages started: $(echo $new)"
	kill $new 2>/dev/null || true
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		alive=""
		for p in $new; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
		[ -n "$alive" ] || return 0
		sleep 0.5
	done
	kill -9 $alive 2>/dev/null || true
}

# disable_units PKG...: under systemd, disables and stops the service units those packages ship.
disable_units() {
	systemd_is_init || return 0
	units="$(dpkg -L "$@" 2>/dev/null | sed -n 's#^/\(usr/\)\{0,1\}lib/systemd/system/\([^/@]*\.service\)$#\2#p' | sort -u)"
	[ -n "$units" ] || return 0
	echo "disabling units: $(echo $units)"
	systemctl disable --now $units || true
}

install_missing() {
	missing=""
	for p in $packages; do installed "$p" || missing="$missing $p"; done
	[ -n "$missing" ] || { echo "packages present: $packages"; return 0; }
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages:$missing; run as root" >&2
		exit 1
	fi
	before="$(mktemp)"
	policy=""
	trap 'rm -f "$before" $policy' EXIT
	daemon_pids >"$before"
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		# Debian's invoke-rc.d and deb-systemd-invoke ask this before starting a service: 101 = no.
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
	fi
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	apt-get install -y -qq --no-install-recommends $missing
	stop_new_daemons "$before"
	# shellcheck disable=SC2086
	disable_units $missing
}

install_missing
"$here/build-kube.sh" "$cache/bin"
"$here/build-containerd.sh" "$cache/bin"
"$here/build-coredns.sh" "$cache/bin"
"$here/build-multus.sh" "$cache/bin"
"$here/build-metallb.sh" "$cache/bin"
"$here/build-pkgroot.sh" "$cache/pkgroot"
