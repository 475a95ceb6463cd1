#!/bin/sh
# After install or upgrade. Arguments: deb postinst "configure [old-version]" (an old version
# means upgrade); rpm %post "1" (install) or "2" and more (upgrade).
# Install: enable the unit (also in a chroot or image build: systemctl enable works offline)
# and start it where systemd runs. Upgrade: leave the unit enabled (or disabled) as it was and
# restart it only if it runs (try-restart), so the new binary serves.
set -e
case "$1" in
configure) upgrade=${2:+yes} ;;
[0-9]*) [ "$1" -ge 2 ] && upgrade=yes || upgrade= ;;
*) exit 0 ;; # deb abort-*: the old package's files are back and nothing was stopped
esac
command -v systemctl >/dev/null 2>&1 || exit 0
systemd_runs() { [ -d /run/systemd/system ]; }
if systemd_runs; then
	systemctl daemon-reload || true
fi
if [ -n "$upgrade" ]; then
	if systemd_runs; then
		systemctl try-restart edgeovn.service || true
	fi
	exit 0
fi
systemctl enable edgeovn.service >/dev/null 2>&1 || true
if systemd_runs; then
	systemctl restart edgeovn.service || true
fi
