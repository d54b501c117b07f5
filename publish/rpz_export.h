// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// RPZ export: a list's domain and ip layers as a DNS Response Policy Zone, so a recursive resolver (Unbound,
// BIND, Knot Resolver, PowerDNS Recursor) protects every device behind it without any urlguard code on them.
// Spec: draft-vixie-dnsop-dns-rpz ("DNS Response Policy Zones"); docs/rpz.md describes the file and how to
// load it.
//
// What maps to what (the entries come from the publisher's clear entry list, publish/entry_list.h):
//   domain layer "evil.example/"  ->  QNAME triggers for the name and every name under it:
//                                        evil.example    CNAME .          (policy NXDOMAIN, draft §3.1)
//                                        *.evil.example  CNAME .
//                                    or  CNAME *.  for the "nodata" action (the draft's NODATA action: the
//                                    name exists, with no records of the asked type)
//                                    or  A 0.0.0.0 + AAAA ::  for the "null" action (its Local Data action:
//                                    the answer most DNS blockers give, a connection to nowhere)
//                                    or  CNAME warning.example.  for the "cname:HOST" action (draft §3.5:
//                                    the resolver answers with HOST's records instead)
//   ip layer "203.0.113.0/24"     ->  a Response IP trigger (draft §4.2): every answer holding an address in
//                                    the range gets the policy:  24.0.113.0.203.rpz-ip CNAME .
//                                    IPv6 "2001:db8::/32" -> 32.zz.db8.2001.rpz-ip (16-bit words reversed,
//                                    "zz" for the "::" run, draft §4.2)
//   url layer                     ->  nothing: DNS never sees a path. They are counted and the zone says so.
//   an allowlist (the same list-entry syntax as ClientOptions::allowlist, ParseRpzAllowlist) ->
//                                    PASSTHRU triggers ("CNAME rpz-passthru."), written before the blocks: a
//                                    domain for the name and every name under it, a range as an rpz-ip
//                                    trigger (the longest prefix wins, by the draft's precedence rules). A blocked domain equal
//                                    to or under an allowed one, and a blocked range inside an allowed one, are
//                                    left out and counted: the library's allowlist overrides them as well, and
//                                    an exact QNAME block would otherwise beat the allowed wildcard.
// A domain name that is not a DNS host name (a label outside [a-z0-9_-], over 63 bytes, or a name that would
// exceed 255 bytes under the zone origin) and a /0 range are left out and counted too: a wrong trigger would
// block more (or less) than the list says.
//
// Note the ip layer's meaning widens in DNS: urlguard matches a URL whose host is a listed address, a resolver
// blocks every name that resolves into the range.
//
// Thread safety: pure functions.
#ifndef URLGUARD_PUBLISH_RPZ_EXPORT_H_
#define URLGUARD_PUBLISH_RPZ_EXPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "platform/env.h"
#include "publish/entry_list.h"
#include "urlguard/status.h"

namespace urlguard {

// TTL of every record in the zone: how long resolvers and their clients may cache a policy answer, and the
// SOA's negative TTL.
constexpr uint32_t kRpzRecordTtlSeconds = 300;

enum class RpzAction {
  kNxdomain,  // "CNAME ." : the name does not exist
  kNodata,    // "CNAME *." : the name exists, with no records
  kNull,      // "A 0.0.0.0" and "AAAA ::" : an address that connects nowhere
  kCname,     // "CNAME HOST." : answer with HOST's records (a warning page server)
};

// Names and ranges the zone lets through (PASSTHRU), in the entry list's forms: domains lower case without a
// final dot ("good.example"), ranges as url/entry.h writes them ("198.51.100.7/32").
struct RpzAllowlist {
  std::vector<std::string> domains;
  std::vector<std::string> ip_ranges;
  uint64_t url_entries_left_out = 0;  // allowlisted URLs with a path: DNS cannot let only that path through
};

// Caps of an allowlist file (kResourceExhausted beyond): the same entry count the library's allowlist takes.
constexpr size_t kMaxRpzAllowlistBytes = size_t{16} << 20;
constexpr size_t kMaxRpzAllowlistEntries = 100000;

struct RpzZoneOptions {
  RpzAction action = RpzAction::kNxdomain;
  std::string cname_target;  // kCname: an absolute host name, "warning.example." (ParseRpzAction makes one)
  std::string origin;        // the zone's name, absolute: "phishing.rpz.urlguard."
  RpzAllowlist allowlist;    // PASSTHRU triggers; empty: none
};

struct RpzZoneStats {
  uint64_t domains = 0;              // domain entries written (two records each)
  uint64_t ip_ranges = 0;            // ip entries written
  uint64_t url_entries_left_out = 0;  // url-layer entries: not expressible in DNS
  uint64_t unexpressible_left_out = 0;  // domains that are no DNS host name, /0 ranges
  uint64_t passthru = 0;             // allowlisted domains and ranges written as PASSTHRU triggers
  uint64_t allowed_left_out = 0;     // blocked entries the allowlist covers (not written)
  uint64_t allowlist_url_entries_left_out = 0;  // allowlisted URLs with a path
};

// Parses the action argument: "nxdomain", "nodata", "null", or "cname:HOST" with HOST a DNS host name (a
// trailing dot optional; the result is lower case and absolute). kInvalidArgument otherwise.
Status ParseRpzAction(std::string_view text, RpzAction* action, std::string* cname_target);

// Normalizes a zone origin: a DNS name of [a-z0-9_-] labels, lower-cased, with the final dot added.
// kInvalidArgument for anything else (empty, "." alone, a bad label, over 255 bytes on the wire).
Result<std::string> NormalizeRpzOrigin(std::string_view origin);

// The rpz-ip owner name, relative to the origin, for a range as url/entry.h writes it: "203.0.113.0/24" ->
// "24.0.113.0.203.rpz-ip", "2001:db8::/32" -> "32.zz.db8.2001.rpz-ip". kInvalidArgument for text that is no
// address or range, or a /0 range (the draft allows prefix lengths 1-32 and 1-128).
Result<std::string> RpzIpTriggerName(std::string_view range);

// Parses an allowlist file: one entry per line in list-entry syntax (a domain, URL, address or range, as
// ClientOptions::allowlist takes them), blank lines and lines starting with '#' skipped, surrounding spaces and
// a CR trimmed. Domains and ranges are returned canonical, sorted and unique; URLs with a path are counted.
// `name` names the input in errors. kInvalidArgument naming the line for an entry that is no domain, URL,
// address or range, or a domain that is no DNS host name (the allowlist must mean what it says: nothing is
// skipped), or a /0 range; kResourceExhausted over kMaxRpzAllowlistBytes or kMaxRpzAllowlistEntries.
Result<RpzAllowlist> ParseRpzAllowlist(std::string_view text, const std::string& name);

// The whole zone file text: a header comment (list, version, what was left out and why), $TTL, $ORIGIN, an SOA
// whose serial is the list version (mod 2^32: RFC 1982 serial arithmetic tolerates the wrap), an NS record,
// then the PASSTHRU triggers of the allowlist (domains, then ranges), then the block triggers (domains in the
// entry list's order, then ranges). `stats` (optional) receives the counts. kInvalidArgument for bad options
// (origin, kCname without a target, an allowlist domain that is no DNS host name or a /0 range).
Result<std::string> RenderRpzZone(const EntryList& entries, const RpzZoneOptions& options, RpzZoneStats* stats);

// The public path of a list's zone: REPO/public/v1/lists/LIST/LIST.rpz (docs/repository-layout.md).
std::string PublicRpzPath(const std::string& repo, const std::string& list);

struct RpzFileReport {
  std::string path;
  uint64_t version = 0;
  uint64_t bytes = 0;
  RpzZoneStats stats;
};

// Exports the version V of `list` that REPO's public manifest names: reads its entries (ReadEntryListAt: the
// newest REPO/private/lists/LIST/B.entries with B <= V, then the V.entries-delta files of B+1..V in order),
// renders the zone and writes it atomically to `out_path` (empty: PublicRpzPath). Failures: kInvalidArgument
// (list name, options), kNotFound (no published version; a version published before the publisher kept entry
// lists; a delta of the chain missing: publish in full once more), kCorruption (manifest, entry list or a delta
// that does not apply), read and write errors. A failure writes nothing.
Result<RpzFileReport> ExportRpzFile(Env* env, const std::string& repo, const std::string& list,
                                    const RpzZoneOptions& options, const std::string& out_path);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_RPZ_EXPORT_H_
