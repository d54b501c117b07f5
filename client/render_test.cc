// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The verdict writer (AppendVerdictJson, AppendVerdictText) against the slow, obvious reference it replaced:
// nlohmann::json trees dumped with invalid UTF-8 replaced. Byte for byte, on fixed cases and on generated verdicts
// whose strings hold control characters, quotes, valid multi-byte UTF-8 and random (mostly ill-formed) bytes.
#include "urlguard/render.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

namespace urlguard {
namespace {

using Json = nlohmann::json;

// ---- the reference: the renderer as it was before the writer (nlohmann trees, std::ostringstream) ----

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }
Json NullOr(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

Json ReferenceVerdictObject(std::string_view input, const Verdict& v) {
  Json j;
  j["input"] = std::string(input);
  j["verdict"] = VerdictKindName(v.kind);
  Json all = Json::array();
  for (const Match& m : v.matches) {
    all.push_back({{"list", m.list}, {"layer", LayerName(m.layer)}, {"expression", m.expression},
                   {"sha256", m.sha256_hex}, {"list_version", m.list_version}});
  }
  if (!v.matches.empty()) {
    const Match& m = v.matches.front();
    j["list"] = v.kind == VerdictKind::kMalicious && !v.list.empty() ? v.list : m.list;
    j["layer"] = LayerName(m.layer);
    j["expression"] = m.expression;
    j["sha256"] = m.sha256_hex;
    j["list_version"] = m.list_version;
  } else {
    j["list"] = NullOr(v.list);
    j["layer"] = nullptr;
    j["expression"] = nullptr;
    j["sha256"] = nullptr;
    j["list_version"] = nullptr;
  }
  j["matches"] = std::move(all);
  j["canonical"] = NullOr(v.canonical);
  j["threat"] = NullOr(v.threat);
  j["stale"] = v.stale;
  j["allowlisted"] = v.allowlisted;
  j["emergency"] = v.emergency;
  j["error"] = NullOr(v.error);
  return j;
}

std::string ReferenceScanJson(const ScanFinding& f) {
  Json j = ReferenceVerdictObject(f.url->url, *f.verdict);
  j["file"] = std::string(f.source);
  j["line"] = f.line;
  j["text"] = std::string(f.text.substr(f.url->begin, f.url->end - f.url->begin));
  j["defanged"] = f.url->defanged;
  return Dump(j);
}

std::string ReferenceText(std::string_view input_view, const Verdict& v) {
  const std::string input(input_view);
  const char* stale = v.stale ? "  [STALE: a list is not installed, damaged or expired; see `urlguard status`]" : "";
  std::ostringstream o;
  const Match* first = v.matches.empty() ? nullptr : &v.matches.front();
  const std::string first_expression = first ? first->expression : "";
  switch (v.kind) {
    case VerdictKind::kSafe:
      o << "safe     " << input << (v.allowlisted ? "  (allowlisted)" : "") << stale;
      break;
    case VerdictKind::kSafeVerified:
      o << "safe     " << input << "  (local filter hit " << first_expression << ", verified safe"
        << (v.from_cache ? " from cache" : " by the server") << ")" << stale;
      break;
    case VerdictKind::kMalicious:
      o << "MALICIOUS " << input << "  list=" << v.list << (v.threat.empty() ? "" : " threat=" + v.threat)
        << " expression=" << first_expression
        << (v.emergency ? " (emergency policy: not verified)" : v.from_cache ? " (cached)" : " (verified)") << stale;
      break;
    case VerdictKind::kUnverifiedHit:
      o << "UNVERIFIED " << input << "  local hit list=" << (first ? first->list : "")
        << " expression=" << first_expression << "; verification unavailable"
        << (v.error.empty() ? "" : ": " + v.error) << stale;
      break;
    case VerdictKind::kInvalid:
      o << "invalid  " << input << "  (" << v.error << ")";
      break;
    case VerdictKind::kHit:
      o << "HIT      " << input;
      if (first != nullptr) {
        o << "  list=" << first->list << " layer=" << LayerName(first->layer) << " expression=" << first->expression;
      }
      if (v.matches.size() > 1) o << " (+" << v.matches.size() - 1 << " more)";
      o << stale;
      break;
  }
  return o.str();
}

// ---- generated verdicts ----

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  uint64_t Next() { return rng_(); }
  bool Coin() { return Next() & 1; }

  // Empty, plain ASCII, or a mix of ASCII, escapes, valid UTF-8 (2, 3 and 4 bytes) and arbitrary bytes.
  std::string String() {
    static const char* kPieces[] = {"http://evil.example/", "a",      "\"",         "\\",        "/",
                                    "\x7f",                 "\t",     "\n",         "\r",        "\b",
                                    "\f",                   "\x01",   "\x1f",       "\xc3\xa9",  "\xe2\x82\xac",
                                    "\xf0\x9f\x98\x80",     "\xed\x9f\xbf", "\xef\xbf\xbd", "%FF",  " "};
    std::string s;
    switch (Next() % 4) {
      case 0:
        return s;
      case 1:
        return "https://www.example.com/path?q=" + std::to_string(Next() % 1000);
      default:
        break;
    }
    const int n = static_cast<int>(Next() % 24);
    for (int i = 0; i < n; ++i) {
      if (Next() % 3 == 0) {
        s.push_back(static_cast<char>(Next() % 256));  // often ill-formed: a lone lead or continuation byte
      } else {
        s += kPieces[Next() % std::size(kPieces)];
      }
    }
    if (Coin() && !s.empty()) s.resize(s.size() - 1);  // maybe cut a multi-byte sequence short
    return s;
  }

  Verdict RandomVerdict() {
    Verdict v;
    if (Next() % 4 == 0) {  // a plain "safe", the writer's fast path
      v.canonical = String();
      return v;
    }
    v.kind = static_cast<VerdictKind>(Next() % 6);
    const int matches = static_cast<int>(Next() % 4);
    for (int i = 0; i < matches; ++i) {
      Match m;
      m.list = String();
      m.layer = static_cast<Layer>(Next() % 3);
      m.expression = String();
      m.sha256_hex = String();
      m.list_version = Coin() ? Next() : Next() % 100;
      v.matches.push_back(m);
    }
    v.error = String();
    v.canonical = String();
    v.list = String();
    v.threat = String();
    v.stale = Coin();
    v.allowlisted = Coin();
    v.emergency = Coin();
    v.from_cache = Coin();
    return v;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(RenderTest, VerdictJsonPinsKeyOrderAndShape) {
  Verdict v;
  v.kind = VerdictKind::kHit;
  v.matches.push_back({"phishing", Layer::kUrl, "evil.example/login.php", "ab12", 7});
  v.matches.push_back({"malware", Layer::kDomain, "evil.example/", "cd34", 3});
  EXPECT_EQ(RenderVerdictJson("http://evil.example/login.php", v),
            "{\"allowlisted\":false,\"canonical\":null,\"emergency\":false,\"error\":null,"
            "\"expression\":\"evil.example/login.php\",\"input\":\"http://evil.example/login.php\",\"layer\":\"url\","
            "\"list\":\"phishing\",\"list_version\":7,\"matches\":[{\"expression\":\"evil.example/login.php\","
            "\"layer\":\"url\",\"list\":\"phishing\",\"list_version\":7,\"sha256\":\"ab12\"},"
            "{\"expression\":\"evil.example/\",\"layer\":\"domain\",\"list\":\"malware\",\"list_version\":3,"
            "\"sha256\":\"cd34\"}],\"sha256\":\"ab12\",\"stale\":false,\"threat\":null,\"verdict\":\"hit\"}");
  Verdict safe;
  EXPECT_EQ(RenderVerdictJson("a\"\\\x01\xff\xc3", safe),
            "{\"allowlisted\":false,\"canonical\":null,\"emergency\":false,\"error\":null,\"expression\":null,"
            "\"input\":\"a\\\"\\\\\\u0001\xef\xbf\xbd\xef\xbf\xbd\",\"layer\":null,\"list\":null,\"list_version\":null,"
            "\"matches\":[],\"sha256\":null,\"stale\":false,\"threat\":null,\"verdict\":\"safe\"}");
}

TEST(RenderTest, VerdictWriterMatchesTheJsonTreeReference) {
  Gen gen(20261124);
  for (int i = 0; i < 20000; ++i) {
    const std::string input = gen.String();
    const Verdict v = gen.RandomVerdict();
    const std::string want = Dump(ReferenceVerdictObject(input, v));
    ASSERT_EQ(RenderVerdictJson(input, v), want) << "case " << i;
    std::string appended = "prefix";
    AppendVerdictJson(&appended, input, v);
    ASSERT_EQ(appended, "prefix" + want);
    ASSERT_EQ(RenderVerdictText(input, v), ReferenceText(input, v)) << "case " << i;
  }
}

TEST(RenderTest, EveryTwoByteStringEscapesAsTheReferenceDoes) {
  // Exhaustive over short strings: every lead/continuation pairing, plus a third byte that may complete it.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (const char* tail : {"", "\x80", "\xbf", "x", "\x80\x80"}) {
        std::string s{static_cast<char>(a), static_cast<char>(b)};
        s += tail;
        Verdict v;
        ASSERT_EQ(RenderVerdictJson(s, v), Dump(ReferenceVerdictObject(s, v))) << a << " " << b << " " << tail;
      }
    }
  }
}

TEST(RenderTest, ScanFindingJsonMatchesTheReference) {
  Gen gen(7);
  for (int i = 0; i < 5000; ++i) {
    const std::string text = gen.String() + "hxxp://evil[.]example/x " + gen.String();
    FoundUrl u;
    u.url = gen.String();
    u.begin = gen.Next() % (text.size() + 1);
    u.end = u.begin + gen.Next() % (text.size() - u.begin + 1);
    u.defanged = gen.Coin();
    const Verdict v = gen.RandomVerdict();
    const std::string source = gen.String();
    ScanFinding f{source, gen.Next(), text, &u, &v};
    ASSERT_EQ(RenderScanFindingJson(f), ReferenceScanJson(f)) << "case " << i;
  }
}

}  // namespace
}  // namespace urlguard
