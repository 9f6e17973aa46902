#!/usr/bin/env bash
# format.sh - reformat the C files of FORMAT_PATHS in place with the repository's .clang-format.
#   scripts/format.sh            reformat them
#   scripts/format.sh --check    change nothing; list the files that differ, exit 1 if any
#                                (scripts/format-check.sh, run by `make test`)
#   scripts/format.sh [--check] PATH...   the same for these files or folders instead
# The output of clang-format changes between major versions: the tree is formatted with
# CLANG_FORMAT_MAJOR; another version is refused rather than trusted.
set -euo pipefail
cd "$(dirname "$0")/.."

# The files and folders held to .clang-format: every C file of the repository.
FORMAT_PATHS=(src include tests bench tools scripts examples lttng)
CLANG_FORMAT_MAJOR=14

check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
paths=("$@")
[[ ${#paths[@]} -gt 0 ]] || paths=("${FORMAT_PATHS[@]}")

cf=$(command -v "clang-format-$CLANG_FORMAT_MAJOR" || command -v clang-format || true)
if [[ -z $cf ]]; then
  echo "format: clang-format not found (scripts/deps.sh installs it: Debian package clang-format)" >&2
  exit 2
fi
major=$("$cf" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [[ $major != "$CLANG_FORMAT_MAJOR" ]]; then
  echo "format: $cf is version $major; the tree is formatted with clang-format $CLANG_FORMAT_MAJOR" >&2
  exit 2
fi

mapfile -t files < <(find "${paths[@]}" -type f \( -name '*.c' -o -name '*.h' \) -not -path '*/node_modules/*' | sort)
differ=()
for f in "${files[@]}"; do
  if [[ $check == 1 ]]; then
    "$cf" --style=file "$f" | cmp -s - "$f" || differ+=("$f")
  else
    "$cf" --style=file -i "$f"
  fi
done
if [[ $check == 1 && ${#differ[@]} -gt 0 ]]; then
  echo "format: these files differ from .clang-format (scripts/format.sh reformats them):" >&2
  printf '  %s\n' "${differ[@]}" >&2
  exit 1
fi
[[ $check == 1 ]] && echo "format: ${#files[@]} files follow .clang-format (${paths[*]})"
exit 0
