#!/bin/sh
# After removal. Arguments: deb postrm "remove", "purge", "upgrade", "disappear" or "abort-*";
# rpm %postun "0" (erase) or "1" (upgrade).
# Purge (deb): remove what edgeovn made on the host, through the copy of `edgeovn` the prerm
# kept, with the config.yaml it kept (dpkg has removed the conffile by now): its pod ports and
# ovn0 in OVS, the CNI files if still there, and the state
# (/var/lib/edgeovn, the IPAM database). RPM has no purge: `edgeovn cleanup --all` before
# `rpm -e` does the same.
set -e
case "$1" in
purge)
	keep=/var/lib/edgeovn/edgeovn-purge
	if [ -x "$keep" ]; then
		opts=$(cat /var/lib/edgeovn/purge-opts 2>/dev/null || true)
		conf=/var/lib/edgeovn/purge-config.yaml
		[ -r "$conf" ] || conf=/dev/null
		"$keep" cleanup --all $opts --config="$conf" || "$keep" cleanup --all $opts --config=/dev/null || true
	fi
	rm -rf /var/lib/edgeovn
	;;
remove | 0)
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl daemon-reload || true
	fi
	;;
esac
