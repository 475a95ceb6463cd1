#!/bin/sh
# Before removal. Arguments: deb prerm "remove", "upgrade", "deconfigure" or "failed-upgrade";
# rpm %preun "0" (erase) or "1" (upgrade: the new package's %post restarts the unit, so nothing
# is stopped or disabled here).
# Removal: stop and disable edgeovn.socket and the service (the socket first, in the same
# call, so no CNI call starts the service again; its socket file goes with it), then take
# edgeovn's CNI files away (config first), so the
# runtime sends the next pod to no dead plugin; pods keep their network (the datapath is
# OVS/OVN). cleanup reads /etc/edgeovn/config.yaml like the daemon; if that file does not
# parse, it runs again on the defaults and $EDGEOVN_OPTS, so a broken config never leaves the
# CNI files behind. On a deb removal keep a copy of the binary and of config.yaml with the
# state, for a later purge (its postrm runs `edgeovn cleanup --all` when /usr/bin/edgeovn and
# the conffile are gone).
set -e
case "$1" in
remove | deconfigure | 0) ;;
*) exit 0 ;;
esac
if command -v systemctl >/dev/null 2>&1; then
	systemctl disable edgeovn.socket edgeovn.service >/dev/null 2>&1 || true
	if [ -d /run/systemd/system ]; then
		systemctl stop edgeovn.socket edgeovn.service || true
	fi
fi
EDGEOVN_OPTS=
if [ -r /etc/default/edgeovn ]; then
	. /etc/default/edgeovn
fi
edgeovn cleanup --cni $EDGEOVN_OPTS || edgeovn cleanup --cni $EDGEOVN_OPTS --config=/dev/null || true
if [ "$1" = remove ]; then
	mkdir -p /var/lib/edgeovn && chmod 0700 /var/lib/edgeovn
	cp /usr/bin/edgeovn /var/lib/edgeovn/edgeovn-purge || true
	if [ -r /etc/edgeovn/config.yaml ]; then
		cp /etc/edgeovn/config.yaml /var/lib/edgeovn/purge-config.yaml || true
	fi
	printf '%s\n' "$EDGEOVN_OPTS" >/var/lib/edgeovn/purge-opts || true
fi
