#!/usr/bin/env bash
# Fails (exit 1) when a C++/CUDA file under sim/, kernels/, tools/ or tests/ differs from what
# clang-format makes of it with the repo's .clang-format. `tools/check_format.sh --fix` rewrites them.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'sim/*.cc' 'sim/*.h' 'kernels/*.cc' 'kernels/*.h' 'kernels/*.cu' 'kernels/*.cuh' \
  'tools/*.cc' 'tools/*.h' 'tests/*.cc' 'tests/*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
clang-format --dry-run --Werror "${files[@]}"
echo "format: ${#files[@]} files match .clang-format"
