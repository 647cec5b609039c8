#!/usr/bin/env bash
# Builds a benchgym base image with no registry: debootstrap a Debian suite into a folder,
# then `docker import` it. Needs root, debootstrap and a reachable Debian mirror.
#   usage: build-base.sh SUITE TAG PACKAGE...
#   e.g.   build-base.sh bookworm benchgym/base-python:3.11 python3 python3-venv git patch
set -euo pipefail
suite=$1 tag=$2
shift 2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d "${TMPDIR:-/tmp}/benchgym-rootfs-XXXXXX")
trap 'rm -rf "$root"' EXIT
packages=$(IFS=,; echo "ca-certificates,procps,$*")
echo "debootstrap $suite ($packages) from $mirror" >&2
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >&2
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/*
tar --numeric-owner -C "$root" -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV LANG=C.UTF-8' \
  -c 'CMD ["bash"]' \
  -m "benchgym base image: debootstrap $suite" - "$tag"
