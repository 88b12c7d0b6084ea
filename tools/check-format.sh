#!/usr/bin/env bash
# Fails (exit 1) when a C++ or CUDA source of the project is not formatted as .clang-format says,
# naming each such file; `make format` fixes them. Installs clang-format when it is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  tools/install-deps.sh --with-format
fi
command -v "$CLANG_FORMAT" >/dev/null 2>&1 || { echo "check-format: $CLANG_FORMAT not found" >&2; exit 1; }

unformatted=()
while IFS= read -r -d '' file; do
  "$CLANG_FORMAT" --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done < <(git ls-files -z --cached --others --exclude-standard -- '*.h' '*.cc' '*.cu' '*.cuh')

if [[ ${#unformatted[@]} -gt 0 ]]; then
  echo "check-format: ${#unformatted[@]} file(s) not formatted by $("$CLANG_FORMAT" --version | head -1):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "Run 'make format' and commit the result." >&2
  exit 1
fi
echo "check-format: every source file is formatted ($("$CLANG_FORMAT" --version | head -1))"
