#!/usr/bin/env bash
# install_check.sh BUILD_DIR SOURCE_DIR: install tenure into a temporary prefix, then build the
# quickstart against it twice, with pkg-config and with CMake's find_package, and run both.
set -euo pipefail
build=$1 src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib64/pkgconfig:$prefix/lib/x86_64-linux-gnu/pkgconfig"
cc -std=c11 -Wall -Wextra -o "$prefix/qs_pc" "$src/examples/quickstart.c" $(pkg-config --cflags --libs tenure) -Wl,-rpath,"$prefix/lib"
"$prefix/qs_pc" | grep -q "sum 999499500"
cmake -S "$src/examples/consumer" -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
"$prefix/consumer/consumer" | grep -q "sum 999499500"
echo "install check: pkg-config and find_package builds work"
