#!/usr/bin/env bash
# check_offline.sh SOURCE_DIR WORK_DIR (test build_offline, issue 38 finding 7): the default
# build needs no network. tenure-report's --html needs chart.js from npm; CMake installs it
# when it configures, and an npm that cannot (offline: here an npm that fails as npm ci does
# without a registry) leaves tenure-report without --html and says so, instead of a build
# that fails at `npm ci`. An npm that can (here one that lays out the package) gives --html.
# Skipped (77) where tenure-report is not built (libbabeltrace2, libarchive missing).
set -uo pipefail
src=$1 work=$2
pkg-config --exists babeltrace2 libarchive || { echo "tenure-report is not built here: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "build_offline: $*" >&2; exit 1; }

cat >"$work/npm-offline" <<'NPM'
#!/bin/sh
echo "npm error code ENOTCACHED" >&2
echo "npm error request to https://registry.npmjs.org/chart.js failed: cache mode is 'only-if-cached'" >&2
exit 1
NPM
cat >"$work/npm-online" <<'NPM'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --prefix ] && prefix=$2; shift; done
mkdir -p "$prefix/node_modules/chart.js/dist" && echo "/* chart.js */" >"$prefix/node_modules/chart.js/dist/chart.umd.min.js"
NPM
chmod +x "$work/npm-offline" "$work/npm-online"

has_html() { grep -q "^TENURE_REPORT_HAS_HTML:INTERNAL=ON" "$work/tree/CMakeCache.txt"; }
configure() {
    cmake -S "$src" -B "$work/tree" -DTENURE_BUILD_TESTS=OFF -DTENURE_BUILD_BENCH=OFF -DTENURE_LTTNG=OFF \
        -DTENURE_NPM="$work/npm-$1" >"$work/configure-$1.log" 2>&1 || { cat "$work/configure-$1.log"; fail "configure ($1)"; }
}

configure offline
grep -q "tenure-report: built without --html: npm could not install chart.js" "$work/configure-offline.log" ||
    { cat "$work/configure-offline.log"; fail "offline: no note that --html is left out"; }
grep -q "TENURE_REPORT_HTML=OFF" "$work/configure-offline.log" || fail "offline: the note does not name TENURE_REPORT_HTML=OFF"
has_html && fail "offline: tenure-report would be built with --html, and the build would need the network"
grep -rq "npm" "$work/tree/tools/tenure-report/Makefile" "$work/tree/tools/tenure-report/CMakeFiles/tenure-report.dir/build.make" &&
    fail "offline: the build runs npm"

configure online
has_html || { cat "$work/configure-online.log"; fail "online: chart.js installed, but tenure-report is built without --html"; }
grep -rq "npm" "$work/tree/tools/tenure-report/CMakeFiles/tenure-report.dir/build.make" && fail "online: the build runs npm"
echo "build_offline: offline, tenure-report is configured without --html and says so; online, with it; the build never runs npm"
