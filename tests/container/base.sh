#!/usr/bin/env bash
# Makes sure the base image the Dockerfile names (FROM denoland/deno:X) exists in the local
# podman store. Where the official image is already there (pulled by hand, or a machine that can
# reach Docker Hub), it is used as it is. Otherwise this builds a stand-in from what CI reaches: a
# Debian bookworm root file system from Debian's mirror (mmdebstrap) and Deno X from the npm
# registry (@deno/linux-x64-glibc), after the official image's recipe (Containerfile.base).
#
# The stand-in is labelled with a hash of its recipe and the Deno version; a later run reuses it
# while the label matches and rebuilds it when the recipe changes. FORCE=1 rebuilds it anyway.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

tag=$(sed -nE 's/^FROM[[:space:]]+(denoland\/deno:[^[:space:]]+).*/\1/p' "$root/Dockerfile" | head -n1)
[ -n "$tag" ] || { echo "no FROM denoland/deno:… in the Dockerfile" >&2; exit 1; }
version=${tag#denoland/deno:}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Where this machine reaches the npm registry through a TLS-intercepting proxy, its CA bundle
# (BUILDER_CA_FILE, else DENO_CERT or SSL_CERT_FILE) goes into the stand-in as DENO_CERT, so that
# `deno install` in the Dockerfile can fetch packages. The official image has no such line.
ca=${BUILDER_CA_FILE:-${DENO_CERT:-${SSL_CERT_FILE:-}}}
[ -z "$ca" ] || [ -s "$ca" ] || ca=
recipe=$(cat "$here/Containerfile.base" "$here/entry.sh" "$here/base.sh" ${ca:+"$ca"} |
  sha256sum | cut -c1-16)-$version

if [ "${FORCE:-0}" != 1 ] && podman image exists "$tag"; then
  label=$(podman image inspect --format '{{ index .Labels "link-feed.stand-in" }}' "$tag" 2>/dev/null || true)
  if [ -z "$label" ] || [ "$label" = "<no value>" ]; then
    echo "$tag: present (not a stand-in), used as it is"
    exit 0
  fi
  if [ "$label" = "$recipe" ]; then
    echo "$tag: stand-in $recipe, reused"
    exit 0
  fi
  echo "$tag: stand-in $label is out of date, rebuilding"
fi

case "$(uname -m)" in
  x86_64) platform=linux-x64-glibc ;;
  aarch64) platform=linux-arm64-glibc ;;
  *) echo "no Deno build on npm for $(uname -m)" >&2; exit 1 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
echo "$tag: building a stand-in (Debian bookworm from $mirror, Deno $version from npm)"
# Like debian:bookworm-slim: the minimal base, without documentation, manual pages or locales.
# ROOTFS_TAR names a file that keeps the root file system between runs (made when missing).
rootfs=${ROOTFS_TAR:-$work/rootfs.tar}
if [ ! -s "$rootfs" ]; then
  mmdebstrap --quiet --format=tar --variant=minbase --include=tini \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm "$rootfs.part" "$mirror"
  mv "$rootfs.part" "$rootfs"
fi
[ "$rootfs" = "$work/rootfs.tar" ] || cp "$rootfs" "$work/rootfs.tar"
(cd "$work" && npm pack --silent "@deno/$platform@$version" >/dev/null)
tar -xzf "$work"/deno-*.tgz -C "$work" package/deno
mv "$work/package/deno" "$work/deno"
[ "$("$work/deno" --version | head -n1 | cut -d' ' -f2)" = "$version" ]
cp "$here/Containerfile.base" "$here/entry.sh" "$work/"
chmod 755 "$work/deno" "$work/entry.sh"
if [ -n "$ca" ]; then
  echo "$tag: the stand-in trusts $ca (DENO_CERT) to reach the npm registry from this machine"
  cp "$ca" "$work/builder-ca.pem"
  printf '%s\n' 'COPY builder-ca.pem /etc/ssl/certs/builder-ca.pem' \
    'ENV DENO_CERT=/etc/ssl/certs/builder-ca.pem' >>"$work/Containerfile.base"
fi
podman build --quiet --network host --build-arg "DENO_VERSION=$version" \
  --label "link-feed.stand-in=$recipe" -f "$work/Containerfile.base" -t "$tag" "$work" >/dev/null
echo "$tag: stand-in $recipe built in $(($(date +%s) - started)) s"
