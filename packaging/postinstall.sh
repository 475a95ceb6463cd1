#!/bin/sh
# Enables edgeovn (also in a chroot or image build, where systemctl enable works offline) and
# (re)starts it where systemd runs.
set -e
if command -v systemctl >/dev/null 2>&1; then
	systemctl enable edgeovn.service >/dev/null 2>&1 || true
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload || true
		systemctl restart edgeovn.service || true
	fi
fi
