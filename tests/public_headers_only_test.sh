#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The binaries and the demo use the public API only: no file in tools/ or demo/ may include an internal header
# (core/, sync/, publish/, platform/, format/, http/). Everything they need is in include/urlguard/.
# Usage: public_headers_only_test.sh SOURCE_DIR
set -u
src=${1:?usage: $0 SOURCE_DIR}
hits=$(grep -rnE '#[[:space:]]*include[[:space:]]*"(core|sync|publish|platform|format|http)/' \
         "$src/tools" "$src/demo" --include='*.cc' --include='*.h' --include='*.cpp' 2>/dev/null)
hits=$(printf '%s\n' "$hits" | grep -v '^$')
if [ -n "$hits" ]; then
  echo "internal headers included from tools/ or demo/ (use include/urlguard/ instead):"
  printf '%s\n' "$hits"
  exit 1
fi
echo "tools/ and demo/ include only public headers"
