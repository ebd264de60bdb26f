#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Run here, on Debian 12 with its package registry, before packaging/gpu-check.sh runs on a GPU
# machine that has PyTorch (and its LibTorch, CMake, ninja, g++) but no Qt, no CLI11 and no
# package registry. Downloads the few Debian packages the headless build and its tests need,
# unpacks them with `dpkg -x`, keeps only what the build reads (headers, CMake files, libraries),
# and packs them as .gpu-deps/deps.tar.xz (git-ignored; about 15 MB) for the check to unpack.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${D2DPO_GPU_DEPS:-.gpu-deps}

packages=(
    libcli11-dev nlohmann-json3-dev                     # header-only: options and JSON
    libsqlitecpp-dev libsqlite3-dev libsqlite3-0        # the preference store
    zlib1g-dev                                          # checkpoint CRC-32
    qt6-base-dev qt6-base-dev-tools libqt6core6 libqt6test6   # Qt Test for the test suites, moc
    qmake6 qmake6-bin                                   # Qt6CoreTools' targets require qmake6 to exist
    libicu72 libdouble-conversion3 libpcre2-16-0 libb2-1 libglib2.0-0 libzstd1   # what Qt Core loads
    libre2-dev libre2-9 libparasail-dev libparasail8    # motif rules, alignment
    libpq-dev libpq5 libssl-dev libssl3                 # the team store's client (libpq.pc wants libssl's)
    # libpq5's own libraries, which a machine of another distribution names differently or lacks
    libldap-2.5-0 libsasl2-2 libsasl2-modules-db libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0
    libkeyutils1 libcom-err2 libgnutls30 libnettle8 libhogweed6 libgmp10 libidn2-0 libunistring2
    libp11-kit0 libtasn1-6 libffi8 libdb5.3
)

work=$(mktemp -d)
chmod 755 "$work" # apt-get download drops privileges to _apt
trap 'rm -rf "$work"' EXIT
echo "gpu-prepare: downloading ${#packages[@]} packages"
(cd "$work" && apt-get download -q "${packages[@]}" >/dev/null)
mkdir -p "$work/root"
for deb in "$work"/*.deb; do
    dpkg -x "$deb" "$work/root"
done
# Only the Qt modules the headless build uses (Core, Test, and the CMake glue around them).
keep_qt='^(Qt6|Qt6Core|Qt6CoreTools|Qt6Test|Qt6BuildInternals|Qt6HostInfo|Qt6Platform.*|Qt6Concurrent)$'
qt_cmake="$work/root/usr/lib/x86_64-linux-gnu/cmake"
for dir in "$qt_cmake"/Qt6*; do
    [[ $(basename "$dir") =~ $keep_qt ]] || rm -rf "$dir"
done
qt_include="$work/root/usr/include/x86_64-linux-gnu/qt6"
for dir in "$qt_include"/*; do
    case $(basename "$dir") in QtCore | QtTest) ;; *) rm -rf "$dir" ;; esac
done
rm -rf "$work/root/usr/share/doc" "$work/root/usr/share/man" "$work/root/usr/share/lintian" \
    "$work/root/usr/lib/x86_64-linux-gnu/qt6/mkspecs/features/data/android" 2>/dev/null || true

mkdir -p "$dest"
tar -C "$work/root" -cJf "$dest/deps.tar.xz.part" .
mv "$dest/deps.tar.xz.part" "$dest/deps.tar.xz"
echo "gpu-prepare: wrote $dest/deps.tar.xz ($(du -h "$dest/deps.tar.xz" | cut -f1))"
