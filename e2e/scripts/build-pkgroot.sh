#!/bin/sh
# Builds the Debian root the package test boots with systemd-nspawn: bookworm (minbase) with
# systemd, dbus, Open vSwitch and ovn-host, as a k3s edge host has them before edgeovn.
# usage: build-pkgroot.sh DIR   (does nothing if DIR/.complete exists)
#
# The root is built in DIR.tmp and renamed when whole, so an interrupted build never passes
# for a finished one. Services are kept from starting in the chroot (policy-rc.d).
set -eu
dir="$1"
[ -e "$dir/.complete" ] && { echo "package test root present: $dir"; exit 0; }
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
tmp="$dir.tmp"
rm -rf "$tmp"
echo "building the package test root in $dir (debootstrap, about a minute)"
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$tmp" "$mirror" >"$tmp.log" 2>&1 ||
	{ tail -20 "$tmp.log" >&2; exit 1; }
printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
chmod 755 "$tmp/usr/sbin/policy-rc.d"
chroot "$tmp" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openvswitch-switch ovn-host iproute2' >>"$tmp.log" 2>&1 ||
	{ tail -20 "$tmp.log" >&2; exit 1; }
rm -f "$tmp/usr/sbin/policy-rc.d" "$tmp.log"
chroot "$tmp" apt-get clean
touch "$tmp/.complete"
rm -rf "$dir"
mv "$tmp" "$dir"
