#!/usr/bin/env bash
# format-check.sh - fail, listing them, if files of scripts/format.sh's FORMAT_PATHS differ from
# .clang-format (run by `make test`; scripts/format.sh reformats them).
exec "$(dirname "$0")/format.sh" --check "$@"
