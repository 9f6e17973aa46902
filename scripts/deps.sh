#!/usr/bin/env bash
# deps.sh - make sure the Debian packages tenure's build, tests and benchmarks need are here.
# As root it installs what is missing with apt-get; otherwise it prints the exact command.
set -euo pipefail
# `scripts/deps.sh --bench` (make bench) also wants the peers of the benchmarks: HotSpot
# (java, javac) and Mono SGen (mono, mcs); make build / make test / CI do not need them.

# command-or-file:package pairs ("dpkg:package": the package itself, for headers whose path
# depends on the architecture)
needs=(
  "cmake:cmake"
  "make:make"
  "cc:gcc"
  "pkg-config:pkg-config"
  "/usr/include/gc.h:libgc-dev"
  "babeltrace2:babeltrace2"
  "/usr/include/babeltrace2/babeltrace.h:libbabeltrace2-dev"
  "/usr/lib/python3/dist-packages/bt2:python3-bt2"
  "/usr/include/archive.h:libarchive-dev"
  "/usr/bin/python3:python3"
  "npm:npm"
  "chromium:chromium"
  "clang-format:clang-format"
  "lttng-sessiond:lttng-tools"
  "dpkg:liblttng-ust-dev"
)
bench_needs=(
  "java:openjdk-17-jdk-headless"
  "javac:openjdk-17-jdk-headless"
  "mono:mono-runtime"
  "mcs:mono-mcs"
)
if [[ ${1:-} == --bench ]]; then
  needs+=("${bench_needs[@]}")
fi

missing=()
for pair in "${needs[@]}"; do
  what=${pair%%:*} pkg=${pair##*:}
  [[ " ${missing[*]:-} " == *" $pkg "* ]] && continue
  if [[ $what == dpkg ]]; then
    [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true) == "install ok installed" ]] || missing+=("$pkg")
  elif [[ $what == /* ]]; then
    [[ -e $what ]] || missing+=("$pkg")
  else
    command -v "$what" >/dev/null 2>&1 || missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "tenure: missing Debian packages: ${missing[*]}" >&2
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "tenure: run as root:  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
