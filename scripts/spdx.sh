#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX license lines in the source files' headers (the project is Apache-2.0: LICENSE, debian/copyright).
#
#   scripts/spdx.sh --check   lists the tracked source files whose header lacks the line; exit 1 if any does
#   scripts/spdx.sh --add     inserts the line into each of them (idempotent), then checks
#
# Which files: those `git ls-files` lists in the work tree (so untracked scratch files never count), by kind:
#   C and C++      *.cc *.h *.c *.cpp *.hpp       "// SPDX-License-Identifier: Apache-2.0" as the first line;
#                                                  "/* SPDX-License-Identifier: Apache-2.0 */" in *.c files and
#                                                  in headers that open with a /* comment (the C API, which C89
#                                                  compilers read)
#   JavaScript     *.js *.mjs *.cjs *.ts          "// ..." as the first line, after a "#!" line if there is one
#   shell, Python  *.sh *.py *.pyi                "# ..." after the "#!" line and a PEP 263 coding line, if any
#   CMake          CMakeLists.txt *.cmake *.cmake.in, and pkg-config templates *.pc.in: "# ..." as the first line
# Left out on purpose, with the reason:
#   fixtures/           test data and golden files pinned byte for byte (a format change must be deliberate)
#   debian/             covered by debian/copyright (DEP-5), as Debian packaging is
#   url/tld_table.inc  generated from the Public Suffix List (MPL-2.0, see debian/copyright)
#   docs, man page includes (*.h2m), configuration and data files: not source code
# A file counts as marked when one of its first 5 lines holds "SPDX-License-Identifier:".
# CTest `spdx_check` runs --check.
set -euo pipefail
cd "$(dirname "$0")/.."
readonly spdx="SPDX-License-Identifier: Apache-2.0"

if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "SKIPPED: not a git work tree (the tracked files are what is checked)"
  exit 77
fi

mode=${1:-}
if [ "$mode" != --check ] && [ "$mode" != --add ]; then
  echo "usage: scripts/spdx.sh --check | --add" >&2
  exit 4
fi

source_files() {
  git ls-files -- '*.cc' '*.h' '*.c' '*.cpp' '*.hpp' '*.js' '*.mjs' '*.cjs' '*.ts' '*.sh' '*.py' '*.pyi' \
      '*CMakeLists.txt' '*.cmake' '*.cmake.in' '*.pc.in' |
    grep -v -E '^(fixtures/|debian/|url/tld_table\.inc$)' || true
}

marked() { head -n 5 -- "$1" | grep -q "SPDX-License-Identifier:"; }

# The comment line for a file, by kind.
comment_for() {
  case "$1" in
    *.c) echo "/* $spdx */" ;;
    *.h | *.hpp) if head -c 2 -- "$1" | grep -q '^/\*'; then echo "/* $spdx */"; else echo "// $spdx"; fi ;;
    *.cc | *.cpp | *.js | *.mjs | *.cjs | *.ts) echo "// $spdx" ;;
    *) echo "# $spdx" ;;
  esac
}

# How many leading lines stay above the SPDX line: a "#!" line, then (Python) a PEP 263 coding line.
lines_to_keep() {
  local n=0
  if head -n 1 -- "$1" | grep -q '^#!'; then n=1; fi
  case "$1" in
    *.py | *.pyi)
      if sed -n "$((n + 1))p" -- "$1" | grep -q -E '^[ \t\f]*#.*coding[:=][ \t]*[-_.a-zA-Z0-9]+'; then n=$((n + 1)); fi ;;
  esac
  echo "$n"
}

add_line() {  # FILE: inserts the line, keeping the file's mode
  local f=$1 keep line tmp
  keep=$(lines_to_keep "$f")
  line=$(comment_for "$f")
  tmp=$(mktemp "$f.spdx.XXXXXX")
  { head -n "$keep" -- "$f"; printf '%s\n' "$line"; tail -n +"$((keep + 1))" -- "$f"; } > "$tmp"
  chmod --reference="$f" "$tmp"
  mv -- "$tmp" "$f"
}

missing=0
added=0
while IFS= read -r f; do
  [ -f "$f" ] || continue  # deleted in the work tree
  marked "$f" && continue
  if [ "$mode" = --add ]; then
    add_line "$f"
    added=$((added + 1))
  else
    echo "no SPDX line: $f"
    missing=$((missing + 1))
  fi
done < <(source_files)

if [ "$mode" = --add ]; then
  echo "spdx: added the line to $added files"
  exec "$0" --check
fi
total=$(source_files | wc -l)
if [ "$missing" != 0 ]; then
  echo "spdx: $missing of $total source files lack \"$spdx\" (scripts/spdx.sh --add inserts it)"
  exit 1
fi
echo "spdx: all $total source files carry \"$spdx\""
