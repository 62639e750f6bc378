#!/bin/sh
# deps.sh - install the Debian packages coarse-plan needs, only when missing.
#
# Usage: tools/deps.sh [--fuzz]
#   (no flag)  build and test dependencies: GLPK, jansson, cmocka; pkg-config,
#              groff and man-db for the install test (tests/cli/install.sh)
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
# the install test: a runtime built with pkg-config, the man page rendered
command -v pkg-config >/dev/null 2>&1 || pkgs="$pkgs pkg-config"
command -v groff >/dev/null 2>&1 || pkgs="$pkgs groff"
command -v man >/dev/null 2>&1 || pkgs="$pkgs man-db"
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
