#!/bin/sh
# After install or upgrade. Arguments: deb postinst "configure [old-version]" (an old version
# means upgrade); rpm %post "1" (install) or "2" and more (upgrade).
# Install: enable edgeovn.socket (the CNI socket, held across restarts) and edgeovn.service
# (also in a chroot or image build: systemctl enable works offline) and start them where
# systemd runs. Upgrade: leave the service enabled (or disabled) as it was, the socket
# following it, and restart the service only if it runs (try-restart), so the new binary
# serves; CNI calls meanwhile wait on the socket.
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
	# The version upgraded from may have had no edgeovn.socket: the socket follows the service.
	if systemctl is-enabled --quiet edgeovn.service 2>/dev/null; then
		systemctl enable edgeovn.socket >/dev/null 2>&1 || true
	fi
	if systemd_runs; then
		if systemctl is-active --quiet edgeovn.socket || ! systemctl is-active --quiet edgeovn.service; then
			systemctl try-restart edgeovn.service || true
		else
			# The running daemon made the socket itself: it goes before systemd takes the path.
			systemctl stop edgeovn.service || true
			systemctl start edgeovn.socket edgeovn.service || true
		fi
	fi
	exit 0
fi
systemctl enable edgeovn.socket edgeovn.service >/dev/null 2>&1 || true
if systemd_runs; then
	systemctl start edgeovn.socket || true
	systemctl restart edgeovn.service || true
fi
