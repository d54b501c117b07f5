// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Ed25519 test material shared by the verifying side (format/signature_test.cc) and the signing side
// (signing/signer_test.cc): the RFC 8032 vectors and PEM keys of other algorithms that must be refused.
#ifndef URLGUARD_TESTS_ED25519_TEST_UTIL_H_
#define URLGUARD_TESTS_ED25519_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <string>
#include <string_view>

#include "core/sha256.h"

namespace urlguard::testing {

// The bytes a lower-case hex string spells (a test failure if it is not hex).
inline std::string Unhex(std::string_view hex) {
  std::string out(hex.size() / 2, '\0');
  EXPECT_TRUE(FromHex(hex, reinterpret_cast<uint8_t*>(out.data()), out.size())) << hex;
  return out;
}

// PEM of a freshly generated key of another algorithm (RSA, EC, X25519).
inline std::string OtherKeyPem(const char* type, bool private_key) {
  EVP_PKEY* pkey = nullptr;
  if (std::string(type) == "RSA") {
    pkey = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(1024));
  } else if (std::string(type) == "EC") {
    pkey = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  } else {
    pkey = EVP_PKEY_Q_keygen(nullptr, nullptr, type);
  }
  EXPECT_NE(pkey, nullptr) << type;
  BIO* bio = BIO_new(BIO_s_mem());
  if (private_key) {
    EXPECT_EQ(PEM_write_bio_PrivateKey(bio, pkey, nullptr, nullptr, 0, nullptr, nullptr), 1);
  } else {
    EXPECT_EQ(PEM_write_bio_PUBKEY(bio, pkey), 1);
  }
  char* p = nullptr;
  long n = BIO_get_mem_data(bio, &p);
  std::string pem(p, static_cast<size_t>(n));
  BIO_free(bio);
  EVP_PKEY_free(pkey);
  return pem;
}

// Spec: RFC 8032 §7.1, TEST 1, TEST 2 and TEST 3 (secret key = seed, public key, message, signature).
struct Rfc8032Vector {
  const char* seed;
  const char* public_key;
  const char* message;
  const char* signature;
};
constexpr Rfc8032Vector kRfc8032[] = {
    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f"
     "0595bb"
     "e24655141438e7a100b"},
    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2ea"
     "eb4302"
     "aeeb00d291612bb0c00"},
    {"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e"
     "9716ed"
     "28dc027beceea1ec40a"},
};

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_ED25519_TEST_UTIL_H_
