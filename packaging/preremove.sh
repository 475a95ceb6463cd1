#!/bin/sh
# Stops edgeovn before its files go; pods keep their network (the datapath is OVS/OVN).
set -e
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl disable --now edgeovn.service || true
fi
