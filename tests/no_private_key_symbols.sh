#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The client library holds no private-key code: signing, private-key loading and key generation live in the
# publisher only (signing/signer.h, signing/keygen.h). Fails when any symbol of the shared library (its full
# symbol table, `nm -C`, which also lists the OpenSSL functions it calls, and its dynamic exports, `nm -D`)
# names one of them.
#
# usage: no_private_key_symbols.sh LIBURLGUARD_SO PUBLISHER_ARCHIVE
# The publisher archive is the positive control: the same pattern must find its signing code, or the
# pattern has gone stale and this test would pass for the wrong reason.
set -eu
lib=$1
control=$2
# Our names (SigningKey, SignManifest, MakeManifestSignatureFile, MakeRotationStatement, WriteKeyPair,
# PrivatePem...) and the OpenSSL entry points that sign, read or write private keys, or generate keys.
pattern='SigningKey|PrivateKey|PrivatePem|[Kk]eygen|KeyGen|GenerateKey|WriteKeyPair|SignManifest|MakeManifestSignatureFile|MakeRotationStatement|DigestSign|EVP_PKEY_sign|PEM_read_bio_PrivateKey|PEM_write_bio_PrivateKey|PKCS8PrivateKey|new_raw_private_key'

status=0
found=$(nm -C "$lib" 2>/dev/null | grep -E "$pattern" || true)
if [ -z "$(nm -C "$lib" 2>/dev/null | head -1)" ]; then
  echo "FAIL: nm -C printed nothing for $lib (stripped or not a library?)"
  exit 1
fi
if [ -n "$found" ]; then
  echo "FAIL: private-key code in $lib (nm -C):"
  echo "$found"
  status=1
fi
exported=$(nm -D -C --defined-only "$lib" | grep -E "$pattern" || true)
if [ -n "$exported" ]; then
  echo "FAIL: private-key symbols exported by $lib (nm -D):"
  echo "$exported"
  status=1
fi
if [ -z "$(nm -D -C --defined-only "$lib" | grep -E ' urlguard_| urlguard::' | head -1)" ]; then
  echo "FAIL: nm -D finds none of the library's own exports in $lib"
  status=1
fi
control_hits=$(nm -C "$control" 2>/dev/null | grep -E "$pattern" | grep -c . || true)
if [ "$control_hits" -eq 0 ]; then
  echo "FAIL: the pattern finds no signing code in the publisher ($control): the pattern is stale"
  status=1
fi
[ $status -eq 0 ] && echo "ok: no private-key symbols in $lib ($control_hits matches in the publisher control)"
exit $status
