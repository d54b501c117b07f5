// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// RAII and small helpers over OpenSSL 3's EVP_PKEY, shared by the client's public-key code
// (format/signature.cc) and the publisher's private-key code (signing/signer.cc). Internal: nothing here is
// part of a byte format.
#ifndef URLGUARD_FORMAT_OPENSSL_PKEY_H_
#define URLGUARD_FORMAT_OPENSSL_PKEY_H_

#include <openssl/bio.h>
#include <openssl/evp.h>

#include <memory>
#include <string>
#include <string_view>

#include "format/signature.h"

namespace urlguard::openssl {

struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
struct BioDeleter {
  void operator()(BIO* p) const { BIO_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

// A passphrase callback that supplies none: OpenSSL's default would prompt on the terminal for an
// encrypted key. Returning 0 makes decryption fail instead.
inline int NoPassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*userdata*/) { return 0; }

// A read-only memory BIO over `data` (which must outlive it).
inline BioPtr MemBio(std::string_view data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

// Everything written to a memory BIO.
inline std::string BioContents(BIO* bio) {
  char* p = nullptr;
  long n = BIO_get_mem_data(bio, &p);
  return n > 0 ? std::string(p, static_cast<size_t>(n)) : std::string();
}

inline bool IsEd25519(const EVP_PKEY* pkey) { return EVP_PKEY_get_base_id(pkey) == EVP_PKEY_ED25519; }

// The 32 raw bytes of an Ed25519 key's public half. False when OpenSSL cannot produce them.
inline bool RawPublicKey(const EVP_PKEY* pkey, PublicKey* out) {
  size_t len = out->raw.size();
  return EVP_PKEY_get_raw_public_key(pkey, out->raw.data(), &len) == 1 && len == out->raw.size();
}

}  // namespace urlguard::openssl

#endif  // URLGUARD_FORMAT_OPENSSL_PKEY_H_
