// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Ed25519 verification over OpenSSL 3 EVP; the signature file format of docs/manifest-format.md §5.
#include "format/signature.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cassert>
#include <cstring>
#include <utility>

#include "core/sha256.h"
#include "format/openssl_pkey.h"

namespace urlguard {
namespace {

using openssl::BioPtr;
using openssl::MdCtxPtr;
using openssl::PkeyPtr;

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status Malformed(size_t line, const std::string& what) {
  return Status::PermissionDenied("malformed signature file: line " + std::to_string(line) + ": " + what);
}

}  // namespace

std::string PublicKey::KeyId() const {
  const Sha256Digest d = Sha256(raw.data(), raw.size());
  return ToHex(d.data(), 8);
}

// ---- public keys and verification ---------------------------------------------------------------------

Result<PublicKey> PublicKeyFromPem(std::string_view pem) {
  if (pem.size() > kMaxPemBytes) {
    return Status::InvalidArgument("public key PEM larger than " + std::to_string(kMaxPemBytes) + " bytes");
  }
  BioPtr bio = openssl::MemBio(pem);
  if (!bio) return Status::Internal("BIO_new_mem_buf failed");
  PkeyPtr pkey(PEM_read_bio_PUBKEY(bio.get(), nullptr, openssl::NoPassphrase, nullptr));
  ERR_clear_error();
  if (!pkey) return Status::InvalidArgument("not a PEM public key (\"-----BEGIN PUBLIC KEY-----\")");
  if (!openssl::IsEd25519(pkey.get())) return Status::InvalidArgument("public key is not an Ed25519 key");
  PublicKey pub;
  if (!openssl::RawPublicKey(pkey.get(), &pub)) {
    ERR_clear_error();
    return Status::InvalidArgument("cannot read the raw Ed25519 public key");
  }
  return pub;
}

bool VerifySignature(const PublicKey& key, std::string_view message,
                     const uint8_t signature[kEd25519SignatureBytes]) {
  PkeyPtr pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.raw.data(), key.raw.size()));
  MdCtxPtr ctx(EVP_MD_CTX_new());
  bool ok = pkey && ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) == 1 &&
            EVP_DigestVerify(ctx.get(), signature, kEd25519SignatureBytes,
                             reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  ERR_clear_error();  // a failed verification leaves an error on the thread's queue
  return ok;
}

// ---- signature files ----------------------------------------------------------------------------------

std::string Base64Encode(const uint8_t* data, size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const uint32_t v = uint32_t{data[i]} << 16 | uint32_t{data[i + 1]} << 8 | data[i + 2];
    out.push_back(kBase64Alphabet[v >> 18]);
    out.push_back(kBase64Alphabet[v >> 12 & 63]);
    out.push_back(kBase64Alphabet[v >> 6 & 63]);
    out.push_back(kBase64Alphabet[v & 63]);
  }
  if (size - i == 1) {
    const uint32_t v = uint32_t{data[i]} << 16;
    out.push_back(kBase64Alphabet[v >> 18]);
    out.push_back(kBase64Alphabet[v >> 12 & 63]);
    out.append("==");
  } else if (size - i == 2) {
    const uint32_t v = uint32_t{data[i]} << 16 | uint32_t{data[i + 1]} << 8;
    out.push_back(kBase64Alphabet[v >> 18]);
    out.push_back(kBase64Alphabet[v >> 12 & 63]);
    out.push_back(kBase64Alphabet[v >> 6 & 63]);
    out.push_back('=');
  }
  return out;
}

bool Base64Decode(std::string_view text, std::string* out) {
  out->clear();
  if (text.size() % 4 != 0) return false;
  out->reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    uint32_t v = 0;
    for (size_t j = 0; j < 4; ++j) {
      if (j >= 4 - static_cast<size_t>(pad)) {
        v <<= 6;
        continue;
      }
      const int d = Base64Value(text[i + j]);
      if (d < 0) return false;  // includes a '=' anywhere but the padding
      v = v << 6 | static_cast<uint32_t>(d);
    }
    // Canonical: the bits the padding drops must be zero.
    if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0)) return false;
    out->push_back(static_cast<char>(v >> 16));
    if (pad < 2) out->push_back(static_cast<char>(v >> 8 & 0xff));
    if (pad < 1) out->push_back(static_cast<char>(v & 0xff));
  }
  return true;
}

std::string FormatSignatureLine(const PublicKey& key, const Ed25519Signature& signature) {
  std::string line = "ed25519 ";
  line += key.KeyId();
  line += ' ';
  line += Base64Encode(signature.data(), signature.size());
  line += '\n';
  return line;
}

Result<std::vector<SignatureEntry>> ParseSignatureFile(std::string_view bytes) {
  if (bytes.size() > kMaxSignatureFileBytes) {
    return Status::PermissionDenied("malformed signature file: larger than " +
                                    std::to_string(kMaxSignatureFileBytes) + " bytes");
  }
  if (bytes.empty()) return Status::PermissionDenied("malformed signature file: empty");
  std::vector<SignatureEntry> entries;
  size_t line_no = 0;
  while (!bytes.empty()) {
    ++line_no;
    const size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) return Malformed(line_no, "no line feed (truncated?)");
    const std::string_view line = bytes.substr(0, nl + 1);
    bytes.remove_prefix(nl + 1);
    // "ed25519 " <16 hex> " " <88 base64> "\n"
    if (line.size() != kSignatureLineBytes) {
      return Malformed(line_no, "length " + std::to_string(line.size()) + ", expected " +
                                    std::to_string(kSignatureLineBytes));
    }
    if (line.substr(0, 8) != "ed25519 ") return Malformed(line_no, "algorithm is not \"ed25519\"");
    const std::string_view key_id = line.substr(8, 16);
    if (!IsLowerHex(key_id)) return Malformed(line_no, "key id is not 16 lower-case hex digits");
    if (line[24] != ' ') return Malformed(line_no, "no space after the key id");
    std::string raw;
    if (!Base64Decode(line.substr(25, 88), &raw) || raw.size() != kEd25519SignatureBytes) {
      return Malformed(line_no, "signature is not canonical base64 of 64 bytes");
    }
    for (const SignatureEntry& e : entries) {
      if (e.key_id == key_id) return Malformed(line_no, "second signature by key " + e.key_id);
    }
    SignatureEntry entry;
    entry.key_id = std::string(key_id);
    std::memcpy(entry.signature.data(), raw.data(), raw.size());
    entries.push_back(std::move(entry));
  }
  // The size cap already bounds the line count; this states it.
  assert(entries.size() <= kMaxSignatureLines);
  return entries;
}

Status VerifyManifestSignature(const std::vector<PublicKey>& trusted, std::string_view manifest_bytes,
                               std::string_view signature_file_bytes) {
  return VerifyDetachedSignature(kManifestSignatureDomain, trusted, manifest_bytes, signature_file_bytes);
}

Status VerifyDetachedSignature(std::string_view domain, const std::vector<PublicKey>& trusted,
                               std::string_view manifest_bytes, std::string_view signature_file_bytes) {
  URLGUARD_ASSIGN_OR_RETURN(std::vector<SignatureEntry> entries, ParseSignatureFile(signature_file_bytes));
  std::vector<std::string> trusted_ids;
  trusted_ids.reserve(trusted.size());
  for (const PublicKey& k : trusted) trusted_ids.push_back(k.KeyId());

  std::string message(domain);
  message.append(manifest_bytes);
  size_t verified = 0;
  std::string seen_ids;
  for (const SignatureEntry& e : entries) {
    if (!seen_ids.empty()) seen_ids += ", ";
    seen_ids += e.key_id;
    bool by_trusted = false;
    bool good = false;
    for (size_t i = 0; i < trusted.size() && !good; ++i) {
      if (trusted_ids[i] != e.key_id) continue;
      by_trusted = true;
      good = VerifySignature(trusted[i], message, e.signature.data());
    }
    if (!by_trusted) continue;
    if (!good) return Status::PermissionDenied("bad signature (key id " + e.key_id + ")");
    ++verified;
  }
  if (verified == 0) {
    return Status::PermissionDenied("signature by an untrusted key (key ids " + seen_ids + "; " +
                                    std::to_string(trusted.size()) + " trusted keys)");
  }
  return Status::Ok();
}

}  // namespace urlguard
