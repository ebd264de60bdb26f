#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds d2dpo-studio and runs its tests against Debian 13 (trixie): LibTorch 2.6, Qt 6.8, GCC 14.
# Makes (once) a minimal trixie root file system with debootstrap, installs the project's packages
# there, copies the source tree in, builds it with the `release` preset and runs CTest, all inside
# a chroot; exits with CTest's status. The host only gains debootstrap. Safe to run again: the root
# file system, the installed packages and the build folder are reused.
#
#   packaging/trixie-check.sh [SOURCE_DIR]     (default: the repository this script is in)
#
# Environment: D2DPO_TRIXIE_ROOT   the root file system (default /var/tmp/d2dpo-trixie)
#              D2DPO_TRIXIE_MIRROR Debian mirror (default: the one the host's apt configuration uses)
#              D2DPO_TRIXIE_CLEAN  1: start from an empty build folder
#              D2DPO_BUILD_LOCK    lock held while building and testing (default /tmp/d2dpo-build.lock)
set -euo pipefail

src=$(cd "${1:-$(dirname "$0")/..}" && pwd)
root=${D2DPO_TRIXIE_ROOT:-/var/tmp/d2dpo-trixie}
root=${root%/}
build_lock=${D2DPO_BUILD_LOCK:-/tmp/d2dpo-build.lock}
inner_src=/root/d2dpo-src   # the source tree's place inside the root file system

log() { printf 'trixie-check: %s\n' "$*"; }
die() { printf 'trixie-check: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "debootstrap, mount and chroot need root: run with sudo"
[ -f "$src/CMakeLists.txt" ] && [ -f "$src/CMakePresets.json" ] || die "$src is not a d2dpo-studio source tree"

# Packages, as in packaging/setup.sh (same names in trixie), and what running the tests needs.
packages=(
    g++ cmake ninja-build          # toolchain (cmake also brings ctest)
    libtorch-dev                   # LibTorch 2.6 (CPU)
    libopenblas0-openmp            # fast BLAS for LibTorch (OpenMP build)
    qt6-base-dev                   # Qt 6.8 Core/Test and Widgets/PrintSupport
    libqcustomplot-dev             # QCustomPlot 2.1 for Qt 6
    dpkg-dev                       # dpkg-shlibdeps, for cpack
    libcli11-dev nlohmann-json3-dev zlib1g-dev
    libsqlite3-dev libsqlitecpp-dev
    pkg-config libre2-dev          # motif rules (RE2)
    python3-torch                  # PyTorch 2.6: the tests that load exports and make models in Python
    rsync                          # this script's copy of the sources into the chroot
)

# The URL of the Debian archive the host's apt already uses: a source whose suite is the host's
# release (e.g. bookworm), neither -security nor -updates; one-line (.list) and deb822 (.sources).
host_mirror() {
    local codename="" files=() f
    codename=$( . /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || true
    [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
    for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && files+=("$f")
    done
    ((${#files[@]})) || return 0
    # Prints "URI SUITE" pairs for every enabled binary (deb) source.
    awk '
        function flush(   i, j, nu, ns, u, s) {
            if (types ~ /(^|[ \t])deb([ \t]|$)/ && tolower(enabled) != "no") {
                nu = split(uris, u, /[ \t]+/); ns = split(suites, s, /[ \t]+/)
                for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
                    if (u[i] != "" && s[j] != "") print u[i], s[j]
            }
            types = uris = suites = enabled = ""
        }
        FNR == 1 { flush() }
        FILENAME ~ /\.sources$/ {
            if ($0 ~ /^[ \t]*#/) next
            if ($0 ~ /^[ \t]*$/) { flush(); next }
            line = $0; key = tolower(line); sub(/:.*/, "", key); sub(/^[^:]*:[ \t]*/, "", line)
            if (key == "types") types = line
            else if (key == "uris") uris = line
            else if (key == "suites") suites = line
            else if (key == "enabled") enabled = line
            next
        }
        $1 == "deb" {
            i = 2
            if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            if (i + 1 <= NF) print $i, $(i + 1)
        }
        END { flush() }
    ' "${files[@]}" |
    awk -v codename="$codename" '
        # First choice: the host release itself; then any plain Debian-looking archive.
        $2 == codename && codename != "" { print $1; found = 1; exit }
        $2 !~ /-(security|updates|backports)$/ && $1 ~ /\/debian\/?$/ && alt == "" { alt = $1 }
        END { if (!found && alt != "") print alt }
    '
}

# --- 1. debootstrap (once) --------------------------------------------------------------------
t0=$SECONDS
if ! command -v debootstrap >/dev/null; then
    log "installing debootstrap on the host"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap; }
fi

mirror=${D2DPO_TRIXIE_MIRROR:-$(host_mirror)}
[ -n "$mirror" ] || die "found no Debian mirror in /etc/apt/sources.list{,.d/*}: set D2DPO_TRIXIE_MIRROR"
mirror=${mirror%/}

mkdir -p "$root"
# One run at a time per root file system (apt, the mounts and the copied sources are shared).
exec {root_lock}>>"$root.lock"
flock -n "$root_lock" || { log "waiting for another trixie-check on $root"; flock "$root_lock"; }

# Mounts left by a run that was killed before its trap ran are taken over and unmounted at exit.
mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null ||
            echo "trixie-check: could not unmount ${mounted[i]}" >&2
    done
    mounted=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

if [ -f "$root/.d2dpo-debootstrap-done" ]; then
    log "reusing the trixie root file system in $root"
else
    for m in proc sys dev dev/pts; do
        ! mountpoint -q "$root/$m" 2>/dev/null || die "$root/$m is mounted; unmount it first"
    done
    log "debootstrap --variant=minbase trixie $root $mirror"
    debootstrap --variant=minbase trixie "$root" "$mirror"
    touch "$root/.d2dpo-debootstrap-done"
fi
t_debootstrap=$((SECONDS - t0))
log "debootstrap phase: $t_debootstrap s"

# --- 2. mounts and packages -------------------------------------------------------------------
for m in proc sys dev dev/pts; do
    # /proc and /dev (with /dev/pts for apt's terminal log); /sys: LibTorch's cpuinfo reads it.
    if ! mountpoint -q "$root/$m"; then
        mount --bind "/$m" "$root/$m"
        mount --make-rslave "$root/$m"   # nothing done under it travels back to the host
    fi
    mounted+=("$root/$m")
done

in_root() { chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

t0=$SECONDS
[ -e /etc/resolv.conf ] && cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
if [ ! -x "$root/usr/sbin/policy-rc.d" ]; then   # no daemons start inside the chroot
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
fi
missing=()
for package in "${packages[@]}"; do
    in_root dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done
if ((${#missing[@]})); then
    log "installing in the chroot: ${missing[*]}"
    in_root apt-get update -qq
    in_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
    in_root apt-get clean
else
    log "all packages already installed in the chroot"
fi
t_packages=$((SECONDS - t0))
log "package phase: $t_packages s"
in_root sh -c 'echo "trixie-check: $(g++ --version | head -n1); $(cmake --version | head -n1);" \
    "libtorch-dev $(dpkg-query -W -f="\${Version}" libtorch-dev); qt6-base-dev $(dpkg-query -W -f="\${Version}" qt6-base-dev)"'

# --- 3. copy the sources, build, test ---------------------------------------------------------
# The tree goes to a staging folder, then rsync compares contents (-c) and rewrites only the files
# that differ, with the current time (no -t): a file changed in the source is always newer than
# the objects built from its old version, even when its own time is older than them, so the
# incremental build (the build folder stays) never keeps stale objects. Files gone go too.
log "copying $src to $root$inner_src"
stage=/root/d2dpo-src.incoming
rm -rf "$root$stage"
mkdir -p "$root$stage" "$root$inner_src"
tar -C "$src" --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | tar -C "$root$stage" -xf -
in_root rsync -rlpc --delete --exclude=/build/ "$stage/" "$inner_src/"
rm -rf "$root$stage"
if [ "${D2DPO_TRIXIE_CLEAN:-0}" = 1 ]; then
    rm -rf "$root$inner_src/build"
fi

# The 2 cores are shared: build and test only while holding the common build lock.
exec {build_lock_fd}>>"$build_lock"
if ! flock -n "$build_lock_fd"; then
    log "waiting for the build lock $build_lock"
    t0=$SECONDS
    flock "$build_lock_fd"
    log "got the build lock after $((SECONDS - t0)) s"
fi

t0=$SECONDS
build_log=$root/root/d2dpo-build.log
log "configuring (cmake --preset release) and building with -j2; log in $build_log"
set +e
# -k 0: on failure, still build everything else, so that one run lists every file that breaks.
in_root sh -c "cd $inner_src && cmake --preset release && cmake --build --preset release -j2 -- -k 0" 2>&1 |
    tee "$build_log"
build_status=${PIPESTATUS[0]}
set -e
t_build=$((SECONDS - t0))
log "build phase: $t_build s (exit status $build_status)"
# Warnings from the project's own files (not from system headers).
warnings=$(grep -E "^$inner_src/[^:]+:[0-9]+:[0-9]+: warning:" "$build_log" | sort -u || true)
if [ -n "$warnings" ]; then
    log "$(grep -c . <<<"$warnings") warnings from project files:"
    printf '%s\n' "$warnings"
else
    log "no warnings from project files"
fi
system_warnings=$(grep -cE "^/usr/[^:]+:[0-9]+:[0-9]+: warning:" "$build_log" || true)
((system_warnings == 0)) || log "$system_warnings more warnings located in system headers (see $build_log)"
if [ "$build_status" -ne 0 ]; then
    log "BUILD FAILED after $t_build s (debootstrap $t_debootstrap s, packages $t_packages s)"
    exit "$build_status"
fi

t0=$SECONDS
test_log=$root/root/d2dpo-ctest.log
log "running ctest --output-on-failure; log in $test_log"
set +e
in_root sh -c "cd $inner_src/build/release && ctest --output-on-failure" 2>&1 | tee "$test_log"
ctest_status=${PIPESTATUS[0]}
set -e
t_tests=$((SECONDS - t0))
flock -u "$build_lock_fd"

summary=$(grep -E "tests passed|No tests were found" "$test_log" | tail -n1 || true)
log "times: debootstrap ${t_debootstrap} s, packages ${t_packages} s, build ${t_build} s, tests ${t_tests} s"
log "ctest (trixie): ${summary:-no summary line} (exit status $ctest_status)"
exit "$ctest_status"
