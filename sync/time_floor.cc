// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync/time_floor.h"

#include <algorithm>

#include "core/sha256.h"

namespace urlguard {
namespace {

constexpr std::string_view kHeaderLine = "urlguard time floor v1\n";

std::string Signed(int64_t floor_unix) { return std::string(kHeaderLine) + std::to_string(floor_unix) + "\n"; }

}  // namespace

std::string SerializeTimeFloor(int64_t floor_unix) {
  const std::string body = Signed(floor_unix);
  return body + ToHex(Sha256(body)) + "\n";
}

Result<int64_t> ParseTimeFloor(std::string_view bytes) {
  if (bytes.size() > kMaxTimeFloorBytes) return Status::Corruption("time floor: too long");
  if (bytes.substr(0, kHeaderLine.size()) != kHeaderLine) return Status::Corruption("time floor: bad header");
  std::string_view rest = bytes.substr(kHeaderLine.size());
  const size_t nl = rest.find('\n');
  if (nl == std::string_view::npos || nl == 0 || nl > 19) return Status::Corruption("time floor: bad number");
  const std::string_view digits = rest.substr(0, nl);
  if (digits.size() > 1 && digits[0] == '0') return Status::Corruption("time floor: leading zero");
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return Status::Corruption("time floor: bad number");
    if (value > (INT64_MAX - (c - '0')) / 10) return Status::Corruption("time floor: out of range");
    value = value * 10 + (c - '0');
  }
  if (SerializeTimeFloor(value) != bytes) return Status::Corruption("time floor: checksum mismatch");
  return value;
}

int64_t ReadTimeFloor(Env* env, const std::string& dir) {
  auto bytes = env->ReadFile(JoinPath(dir, std::string(kTimeFloorFileName)), kMaxTimeFloorBytes);
  if (!bytes.ok()) return 0;
  auto floor = ParseTimeFloor(*bytes);
  return floor.ok() ? *floor : 0;
}

Status AdvanceTimeFloor(Env* env, const std::string& dir, int64_t created_unix) {
  if (created_unix <= ReadTimeFloor(env, dir)) return Status::Ok();
  return WriteFileAtomic(env, JoinPath(dir, std::string(kTimeFloorFileName)), SerializeTimeFloor(created_unix))
      .WithContext("time floor");
}

int64_t FloorOfState(const StoreState& state) {
  int64_t floor = 0;
  for (const ListState& l : state.lists) {
    if (l.installed.has_value()) floor = std::max(floor, l.installed->created_unix);
  }
  return floor;
}

}  // namespace urlguard
