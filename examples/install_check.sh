#!/usr/bin/env bash
# install_check.sh BUILD_DIR SOURCE_DIR [prefix|layout]: tenure installed as its README says.
#
# prefix (test install_check): `cmake --install --prefix` into a temporary prefix, then the
# quickstart built against it with pkg-config (run through its rpath) and with CMake
# (examples/consumer: find_package(tenure) without REQUIRED, tenure::tenure, and
# tenure::heapprof with <tenure/heapprof.h> when the tools were built); no header under a
# bare name but tenure*.h at the top of include/; a project that does not find tenure is told
# so by tenure_FOUND, not by a missing target.
#
# layout (test install_layout): a Debian-style staged install, CMAKE_INSTALL_PREFIX=/usr and
# CMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu under DESTDIR, from a tree configured so (the
# libraries copied from BUILD_DIR: the same objects); its tenure.pc must say /usr/include and
# /usr/lib/x86_64-linux-gnu, and the quickstart builds and runs against the staged files.
set -euo pipefail
build=$1 src=$2 mode=${3:-prefix}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install check: $*" >&2; exit 1; }

check_prefix() {
    local prefix=$tmp/prefix
    cmake --install "$build" --prefix "$prefix" >/dev/null
    local pcdir
    pcdir=$(dirname "$(find "$prefix" -name tenure.pc | head -1)")
    export PKG_CONFIG_PATH=$pcdir
    [ "$(pkg-config --variable=prefix tenure)" = "$prefix" ] || fail "tenure.pc's prefix is not $prefix"
    cc -std=c11 -Wall -Wextra -o "$tmp/qs_pc" "$src/examples/quickstart.c" $(pkg-config --cflags --libs tenure) \
        -Wl,-rpath,"$(pkg-config --variable=libdir tenure)"
    "$tmp/qs_pc" >"$tmp/out" && grep -q "sum 999499500" "$tmp/out" || fail "the pkg-config build did not run"
    for h in "$prefix"/include/*; do
        case $(basename "$h") in tenure*.h | tenure) ;; *) fail "$h: an installed header under a generic name" ;; esac
    done
    local heapprof=OFF
    [ -e "$build/tools/tenure-heapprof/libtenure-heapprof.so" ] && heapprof=ON
    if [ $heapprof = ON ] && [ ! -f "$prefix/include/tenure/heapprof.h" ]; then
        fail "heapprof.h is not installed as include/tenure/heapprof.h"
    fi
    cmake -S "$src/examples/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCONSUMER_HEAPPROF=$heapprof >"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "find_package"; }
    cmake --build "$tmp/consumer" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "the CMake build"; }
    "$tmp/consumer/consumer" >"$tmp/out" && grep -q "sum 999499500" "$tmp/out" || fail "the find_package build did not run"
    # (the output to a file, then grep: `prog | grep -q` under pipefail fails when grep exits
    # before prog has written all its lines, and prog dies of SIGPIPE)
    [ $heapprof = OFF ] || { "$tmp/consumer/consumer_heapprof" >"$tmp/out" 2>&1 && grep -q "tenure-heapprof: instance 1" "$tmp/out"; } ||
        fail "tenure::heapprof: the linked profiler did not report"
    # not found (a version the install is not): without REQUIRED, tenure_FOUND is false and the project goes on
    cmake -S "$src/examples/consumer" -B "$tmp/none" -DCMAKE_PREFIX_PATH="$prefix" -DCONSUMER_VERSION=99 \
        >"$tmp/none.log" 2>&1 || { cat "$tmp/none.log"; fail "a project that did not find tenure failed to configure"; }
    grep -q "consumer: tenure not found" "$tmp/none.log" || { cat "$tmp/none.log"; fail "tenure_FOUND was not false"; }
    echo "install check: pkg-config and find_package builds work; tenure not found is tenure_FOUND false"
}

check_layout() {
    local tree=$tmp/tree stage=$tmp/stage libdir=lib/x86_64-linux-gnu
    cmake -S "$src" -B "$tree" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=$libdir -DTENURE_BUILD_TESTS=OFF \
        -DTENURE_BUILD_BENCH=OFF -DTENURE_BUILD_TOOLS=OFF -DTENURE_LTTNG=OFF >"$tmp/configure.log" 2>&1 ||
        { cat "$tmp/configure.log"; fail "configure"; }
    cp -P "$build"/libtenure.a "$build"/libtenure.so* "$build"/libtenure_objtrack.a "$tree"/
    DESTDIR=$stage cmake --install "$tree" >/dev/null
    local pc=$stage/usr/$libdir/pkgconfig/tenure.pc
    [ -f "$pc" ] || fail "no $pc"
    export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
    [ "$(pkg-config --variable=includedir tenure)" = /usr/include ] || fail "$pc: includedir is not /usr/include"
    [ "$(pkg-config --variable=libdir tenure)" = /usr/$libdir ] || fail "$pc: libdir is not /usr/$libdir"
    local cflags
    cflags=$(pkg-config --cflags tenure)
    [ "${cflags% }" = "-I/usr/include" ] || fail "$pc: --cflags $cflags"
    case " $(pkg-config --libs tenure) " in *" -L/usr/$libdir "*) ;; *) fail "$pc: --libs has no -L/usr/$libdir" ;; esac
    grep -rq "$stage" "$stage/usr/$libdir" && fail "the staged files name the staging directory"
    [ -f "$stage/usr/include/tenure.h" ] && [ -f "$stage/usr/$libdir/cmake/tenure/tenureConfig.cmake" ] ||
        fail "headers or the CMake package are not where /usr puts them"
    cc -std=c11 -o "$tmp/qs" "$src/examples/quickstart.c" $(PKG_CONFIG_SYSROOT_DIR=$stage pkg-config --cflags --libs tenure)
    LD_LIBRARY_PATH=$stage/usr/$libdir "$tmp/qs" >"$tmp/out" && grep -q "sum 999499500" "$tmp/out" ||
        fail "the staged build did not run"
    echo "install check: DESTDIR install to /usr with libdir $libdir: tenure.pc says /usr/include and /usr/$libdir"
}

case $mode in
prefix) check_prefix ;;
layout) check_layout ;;
*) fail "unknown mode $mode" ;;
esac
