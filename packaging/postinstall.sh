#!/bin/sh
# Enables and (re)starts edgeovn where systemd runs; harmless in a chroot or image build.
set -e
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload || true
	systemctl enable edgeovn.service || true
	systemctl restart edgeovn.service || true
fi
