// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the other parsers of format/signature.h and format/key_rotation.h: signature files,
// rotation statements and strict base64. Arbitrary bytes must never crash them; an accepted signature file
// re-formats to the same bytes (the format has one spelling); an accepted base64 text re-encodes to itself;
// a rotation statement that parses has the properties the format promises, and one that is accepted parses.
// Verification (VerifyManifestSignature, AcceptRotation) runs against the fixture test key.
// Seeds: fixtures/golden/manifest_v1.json.sig and fixtures/golden/key_rotation_v1.txt.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/sha256.h"
#include "format/key_rotation.h"
#include "format/signature.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "signature_fuzz: %s\n", what);
  std::abort();
}

// The public key of fixtures/keys/test-ed25519.pem, so the golden seeds reach the verification code.
urlguard::PublicKey TrustedKey() {
  urlguard::PublicKey k;
  if (!urlguard::FromHex("d8914d566c988c265c18814f498316ca68ff015622484820a2435e319c29629b", k.raw.data(),
                         k.raw.size())) {
    Fail("bad key constant");
  }
  return k;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<urlguard::PublicKey> trusted = {TrustedKey()};
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  // Signature files.
  auto entries = urlguard::ParseSignatureFile(input);
  if (entries.ok()) {
    std::string again;
    for (const urlguard::SignatureEntry& e : *entries) {
      if (e.key_id.size() != 16) Fail("key id of the wrong length");
      // Rebuilt by hand: FormatSignatureLine() takes a key, and only the id is known here.
      again +=
          "ed25519 " + e.key_id + " " + urlguard::Base64Encode(e.signature.data(), e.signature.size()) + "\n";
    }
    if (again != input) Fail("signature file does not re-format to the same bytes");
  } else if (entries.status().code() != urlguard::StatusCode::kPermissionDenied) {
    Fail("signature file refused with an unexpected code");
  }
  // A manifest / signature split of the input: must never verify unless the input carries the real golden
  // signature of its first part (only possible when the fuzzer copies a seed exactly).
  const size_t cut = size > urlguard::kSignatureLineBytes ? size - urlguard::kSignatureLineBytes : 0;
  (void)urlguard::VerifyManifestSignature(trusted, input.substr(0, cut), input.substr(cut));

  // Rotation statements.
  auto statement = urlguard::ParseRotationStatement(input);
  if (statement.ok()) {
    if (statement->new_key == statement->old_key) Fail("rotation to the same key parsed");
    if (statement->not_before_unix < 0) Fail("negative not-before parsed");
  }
  auto accepted = urlguard::AcceptRotation(trusted, input, INT64_MAX);
  if (accepted.ok() && !statement.ok()) Fail("accepted a statement that does not parse");

  // Base64.
  std::string decoded;
  if (urlguard::Base64Decode(input, &decoded)) {
    if (urlguard::Base64Encode(reinterpret_cast<const uint8_t*>(decoded.data()), decoded.size()) != input) {
      Fail("accepted non-canonical base64");
    }
  }
  return 0;
}
