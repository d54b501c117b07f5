#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The generated man pages (man/) render without a single groff warning, and each names its program, its version,
# and the options users look for. Usage: man_pages_test.sh MAN_DIR
set -u
dir=${1:?usage: $0 MAN_DIR}
status=0
for page in urlguard urlguardd urlguard-publish urlguard-server; do
  f="$dir/$page.1"
  if [ ! -s "$f" ]; then echo "missing: $f"; status=1; continue; fi
  warnings=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
  if [ -n "$warnings" ]; then echo "$page.1: groff warnings:"; echo "$warnings"; status=1; fi
  text=$(groff -man -Tutf8 "$f" 2>/dev/null | col -bx | tr -s " \n" "  ")
  # The footer carries the version (help2man reads it from --version).
  printf '%s' "$text" | grep -q "$page [0-9][0-9.]*" || { echo "$page.1: no version"; status=1; }
  for want in "NAME" "$page -" "SYNOPSIS" "--version" "EXIT STATUS" "SEE ALSO"; do
    case $text in
      *"$want"*) ;;
      *) echo "$page.1: no \"$want\""; status=1 ;;
    esac
  done
done
for page in urlguard urlguardd; do
  case $(groff -man -Tutf8 "$dir/$page.1" 2>/dev/null | col -bx) in
    *--proxy*) ;;
    *) echo "$page.1: no --proxy"; status=1 ;;
  esac
done
# The publisher's feed loop: its subcommand, the override flags and its own exit statuses (docs/feeds-file.md §8).
case $(groff -man -Tutf8 "$dir/urlguard-publish.1" 2>/dev/null | col -bx | tr -s " \n" "  ") in
  *update*--allow-large-removal*--accept*"exits 3"*) ;;
  *) echo "urlguard-publish.1: no update, --allow-large-removal, --accept and exit status 3"; status=1 ;;
esac
case $(groff -man -Tutf8 "$dir/urlguardd.1" 2>/dev/null | col -bx) in
  *--wait-for-first-sync*READINESS*) ;;
  *) echo "urlguardd.1: no --wait-for-first-sync and its READINESS section"; status=1 ;;
esac
[ $status = 0 ] && echo "4 man pages render without warnings"
exit $status
