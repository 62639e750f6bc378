#!/bin/sh
# deps.sh - install the Debian packages coarse-plan needs, only when missing.
#
# Usage: tools/deps.sh [--fuzz]
#   (no flag)  build and test dependencies: GLPK, jansson, cmocka, libexpat,
#              libhwloc and hwloc's lstopo-no-graphics (tests/cli/hwloc.sh);
#              Open MPI for coarse-run (mpicc and mpirun; Debian's MPI header
#              is not on the default include path, so the probe is the
#              compiler wrapper); pkg-config, groff and man-db for the install test
#              (tests/cli/install.sh); librsvg2-bin's rsvg-convert for the chart
#              test (tests/cli/svg.sh)
#   --fuzz     also clang with libFuzzer (the fuzz smoke run in `make test`)
#
# A dependency counts as present when a C compiler can include its header, so
# a machine that has the libraries from elsewhere is left alone.  apt-get runs
# through sudo when we are not root.
set -eu

CC=${CC:-cc}
pkgs=""

have_header() {
    printf '#include <stdarg.h>\n#include <stddef.h>\n#include <setjmp.h>\n#include <stdint.h>\n#include <%s>\n' "$1" |
        "$CC" -E -x c - >/dev/null 2>&1
}

have_header glpk.h || pkgs="$pkgs libglpk-dev"
have_header jansson.h || pkgs="$pkgs libjansson-dev"
have_header cmocka.h || pkgs="$pkgs libcmocka-dev"
command -v mpicc >/dev/null 2>&1 || pkgs="$pkgs libopenmpi-dev"
command -v mpirun >/dev/null 2>&1 || pkgs="$pkgs openmpi-bin"
have_header expat.h || pkgs="$pkgs libexpat1-dev"
have_header hwloc.h || pkgs="$pkgs libhwloc-dev"
command -v lstopo-no-graphics >/dev/null 2>&1 || pkgs="$pkgs hwloc-nox"
# the install test: a runtime built with pkg-config, the man page rendered
command -v pkg-config >/dev/null 2>&1 || pkgs="$pkgs pkg-config"
command -v groff >/dev/null 2>&1 || pkgs="$pkgs groff"
command -v man >/dev/null 2>&1 || pkgs="$pkgs man-db"
# the chart test renders every SVG to PNG (tests/cli/svg.sh)
command -v rsvg-convert >/dev/null 2>&1 || pkgs="$pkgs librsvg2-bin"
if [ "${1:-}" = "--fuzz" ]; then
    if ! command -v clang >/dev/null 2>&1; then
        pkgs="$pkgs clang"
    fi
    if ! echo 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){(void)d;(void)n;return 0;}' |
        clang -fsanitize=fuzzer -x c - -o /tmp/cp-fuzz-probe.$$ >/dev/null 2>&1; then
        pkgs="$pkgs libclang-rt-14-dev"
    fi
    rm -f /tmp/cp-fuzz-probe.$$
fi

[ -z "$pkgs" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "deps.sh: need root or sudo to install:$pkgs" >&2
    exit 1
fi
echo "deps.sh: installing$pkgs" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $pkgs >&2
