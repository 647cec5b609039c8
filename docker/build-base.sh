#!/usr/bin/env bash
# Builds a benchgym base image with no registry: debootstrap a Debian suite into a folder,
# then `docker import` it. Needs root, debootstrap and a reachable Debian mirror.
#   usage: build-base.sh [--python-prefix DIR] SUITE TAG PACKAGE...
#   e.g.   build-base.sh bookworm benchgym/base-python:3.11 python3 python3-venv git patch
# --python-prefix copies an interpreter built on this host (a pyenv version, built against
# the same Debian release) into /opt/python/<name> and links python3.X, python3 and python
# in /usr/local/bin: for Python versions Debian does not package (3.7, 3.10).
set -euo pipefail
prefix=
if [[ ${1:-} == --python-prefix ]]; then prefix=$2; shift 2; fi
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
comment="benchgym base image: debootstrap $suite"
if [[ -n $prefix ]]; then
  name=$(basename "$prefix")
  exe=$(cd "$prefix/bin" && ls python3.* | grep -E '^python3\.[0-9]+$' | head -1)
  dest=/opt/python/$name
  mkdir -p "$root/opt/python"
  cp -a "$prefix" "$root$dest"
  # Its RPATH names the host prefix; the loader cache finds libpython in the new one.
  echo "$dest/lib" > "$root/etc/ld.so.conf.d/benchgym-python.conf"
  # sysconfig names the host prefix too (its headers, for pip's builds of source-only pins):
  # that path leads to the new one.
  mkdir -p "$root$(dirname "$prefix")"
  ln -sfn "$dest" "$root$prefix"
  chroot "$root" ldconfig
  for link in "$exe" python3 python; do ln -sf "$dest/bin/$exe" "$root/usr/local/bin/$link"; done
  missing=$(chroot "$root" sh -c "ldd $dest/bin/$exe $dest/lib/${exe}/lib-dynload/*.so 2>/dev/null | grep 'not found' | sort -u" || true)
  if [[ -n $missing ]]; then echo "missing libraries for $exe (non-fatal: those modules will not import):" >&2; echo "$missing" >&2; fi
  chroot "$root" /usr/local/bin/python3 -c 'import ssl, sqlite3, ctypes, venv, ensurepip, bz2, lzma, zlib; print("python ok:", __import__("sys").version.split()[0])' >&2
  comment="$comment + $name from the host"
fi
tar --numeric-owner -C "$root" -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV LANG=C.UTF-8' \
  -c 'CMD ["bash"]' \
  -m "$comment" - "$tag"
