// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/ingest.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <optional>
#include <thread>
#include <unordered_map>

#include "url/entry.h"
#include "core/list_name.h"
#include "core/sha256.h"
#include "platform/sequential_file.h"

namespace urlguard {
namespace {

// One entry's KeyRecord and, for a domain or IP entry, its ClearRecord.
Status RecordEntry(const EntryKey& k, uint16_t threat, uint64_t seq, int writer, KeySorter* keys, ClearSorter* clear) {
  KeyRecord r;
  Sha256Digest sha = Sha256(k.expression);
  std::memcpy(r.sha256, sha.data(), 32);
  r.key = LocalKeyFor(k.expression, sha);
  r.seq = seq;
  r.layer = static_cast<uint8_t>(k.layer);
  r.ipv6 = k.ipv6 ? 1 : 0;
  r.prefix_length = static_cast<uint8_t>(k.prefix_length);
  r.threat = threat;
  URLGUARD_RETURN_IF_ERROR(keys->Add(writer, r));
  if (clear != nullptr && k.layer != LayerKind::kUrl) {
    std::string_view text = k.expression;
    if (k.layer == LayerKind::kDomain) text.remove_suffix(1);  // "evil.example/"
    ClearRecord c;
    c.kind = k.layer == LayerKind::kDomain ? 0 : 1;
    if (text.size() > sizeof(c.text)) return Status::Internal("canonical host longer than 254 bytes");
    c.length = static_cast<uint8_t>(text.size());
    std::memcpy(c.text, text.data(), text.size());
    URLGUARD_RETURN_IF_ERROR(clear->Add(writer, c));
  }
  return Status::Ok();
}


constexpr size_t kReadChunk = size_t{256} << 10;

bool IsLineFormat(FeedFormat f) {
  return f == FeedFormat::kPlain || f == FeedFormat::kOpenphish || f == FeedFormat::kHosts ||
         f == FeedFormat::kAbp || f == FeedFormat::kDropTxt;
}

// A file's bytes, inflated on the fly when it is gzip (one or more members, RFC 1952).
class ByteSource {
 public:
  explicit ByteSource(std::unique_ptr<SequentialFile> file) : file_(std::move(file)) {}
  ~ByteSource() {
    if (gzip_) inflateEnd(&z_);
  }

  // Appends up to about kReadChunk bytes to `*out`; false at the end.
  Result<bool> Read(std::string* out) {
    if (!started_) {
      started_ = true;
      in_.resize(kReadChunk);
      URLGUARD_ASSIGN_OR_RETURN(size_t n, file_->Read(in_.data(), in_.size()));
      in_len_ = n;
      gzip_ = n >= 2 && static_cast<uint8_t>(in_[0]) == 0x1f && static_cast<uint8_t>(in_[1]) == 0x8b;
      if (gzip_) {
        z_ = z_stream{};
        if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) return Status::Internal("inflateInit2 failed");
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(in_len_);
      } else {
        out->append(in_.data(), n);
        return n > 0;
      }
    }
    if (!gzip_) {
      size_t at = out->size();
      out->resize(at + kReadChunk);
      URLGUARD_ASSIGN_OR_RETURN(size_t n, file_->Read(out->data() + at, kReadChunk));
      out->resize(at + n);
      return n > 0;
    }
    if (ended_) return false;
    size_t at = out->size();
    out->resize(at + kReadChunk);
    z_.next_out = reinterpret_cast<Bytef*>(out->data() + at);
    z_.avail_out = static_cast<uInt>(kReadChunk);
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0) {
        URLGUARD_ASSIGN_OR_RETURN(size_t n, file_->Read(in_.data(), in_.size()));
        if (n == 0) {
          if (!member_done_) return Status::Corruption(file_->path() + ": truncated gzip stream");
          ended_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(n);
      }
      if (member_done_) {  // bytes after a member: the next member
        inflateReset(&z_);
        member_done_ = false;
      }
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_done_ = true;
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Status::Corruption(file_->path() + ": bad gzip data: " + (z_.msg ? z_.msg : "inflate failed"));
      }
    }
    out->resize(at + (kReadChunk - z_.avail_out));
    return out->size() > at || !ended_;
  }

 private:
  std::unique_ptr<SequentialFile> file_;
  std::string in_;
  size_t in_len_ = 0;
  bool started_ = false;
  bool gzip_ = false;
  bool ended_ = false;
  bool member_done_ = false;
  z_stream z_{};
};

struct Block {
  size_t feed = 0;           // index into the feeds
  FeedSpec spec;             // format resolved
  std::string text;
  uint64_t first_line = 0;   // line number of the block's first line minus one
};

// Lines the parser counts in `text`: newlines, plus a last line without one.
uint64_t LinesIn(std::string_view text) {
  uint64_t n = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

class Pipeline {
 public:
  Pipeline(const IngestOptions& options, ThreatTable* threats, KeySorter* keys, ClearSorter* clear,
           IngestReport* report)
      : options_(options), threats_(threats), keys_(keys), clear_(clear), report_(report) {}

  void Start() {
    for (int i = 0; i < options_.threads; ++i) workers_.emplace_back([this, i] { Work(i); });
  }

  // Queues a block; waits while the queue is full. False when a worker failed.
  bool Push(Block block) EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    while (queue_.size() >= static_cast<size_t>(2 * options_.threads) && error_.ok()) not_full_.Wait(&mutex_);
    if (!error_.ok()) return false;
    queue_.push_back(std::move(block));
    not_empty_.Signal();
    return true;
  }

  Status Finish() EXCLUDES(mutex_, problems_mutex_) {
    {
      MutexLock lock(&mutex_);
      done_ = true;
    }
    not_empty_.SignalAll();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    // The workers are joined: nothing contends for the locks below any more.
    {
      MutexLock lock(&problems_mutex_);
      std::sort(problems_.begin(), problems_.end(), ProblemLess);
      for (auto& p : problems_) report_->problems.push_back(std::move(p.second));
    }
    MutexLock lock(&mutex_);
    return error_;
  }

  uint64_t processed() const { return processed_.load(std::memory_order_relaxed); }

 private:
  using Problem = std::pair<uint64_t, FeedProblem>;  // (MakeSeq, problem)
  static bool ProblemLess(const Problem& a, const Problem& b) { return a.first < b.first; }

  void Fail(Status s) EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    if (error_.ok()) error_ = std::move(s);
    not_full_.SignalAll();
  }

  void AddProblem(size_t feed, FeedProblem p) EXCLUDES(problems_mutex_) {
    uint64_t seq = MakeSeq(options_.first_feed_index + feed, p.line);
    MutexLock lock(&problems_mutex_);
    if (problems_.size() >= options_.max_problems) {
      auto worst = std::max_element(problems_.begin(), problems_.end(), ProblemLess);
      if (worst->first <= seq) return;
      *worst = Problem{seq, std::move(p)};
      return;
    }
    problems_.emplace_back(seq, std::move(p));
  }

  void Work(int writer) EXCLUDES(mutex_) {
    std::unordered_map<std::string, uint16_t> threat_cache;
    for (;;) {
      Block b;
      {
        MutexLock lock(&mutex_);
        while (queue_.empty() && !done_) not_empty_.Wait(&mutex_);
        if (queue_.empty()) return;
        b = std::move(queue_.front());
        queue_.pop_front();
        not_full_.Signal();
      }
      Status s = Process(writer, b, &threat_cache);
      if (!s.ok()) {
        Fail(std::move(s));
        return;
      }
    }
  }

  Status Process(int writer, const Block& b, std::unordered_map<std::string, uint16_t>* threat_cache)
      EXCLUDES(problems_mutex_) {
    std::vector<FeedEntry> entries;
    std::vector<FeedProblem> problems;
    FeedStats stats;
    URLGUARD_RETURN_IF_ERROR(ParseFeed(b.spec, b.text, &entries, &problems, &stats));
    uint64_t rejected = stats.errors;
    for (FeedProblem& p : problems) {
      p.line += b.first_line;
      AddProblem(b.feed, std::move(p));
    }
    for (const FeedEntry& e : entries) {
      const uint64_t line = e.line + b.first_line;
      auto k = EntryKeyFor(e.value);
      if (!k.ok()) {
        ++rejected;
        AddProblem(b.feed, FeedProblem{b.spec.path, line, k.status().message()});
        continue;
      }
      const std::string& threat_name =
          !e.threat.empty() && IsValidThreatName(e.threat) ? e.threat : options_.default_threat;
      uint16_t threat;
      auto cached = threat_cache->find(threat_name);
      if (cached != threat_cache->end()) {
        threat = cached->second;
      } else {
        URLGUARD_ASSIGN_OR_RETURN(threat, threats_->Intern(threat_name));
        threat_cache->emplace(threat_name, threat);
      }
      URLGUARD_RETURN_IF_ERROR(
          RecordEntry(*k, threat, MakeSeq(options_.first_feed_index + b.feed, line), writer, keys_, clear_));
    }
    // Blocks are whole lines, so the HTML check per block is the check on the whole feed.
    const bool html = LooksLikeHtml(b.text);
    MutexLock lock(&problems_mutex_);
    report_->lines += stats.lines;
    report_->entries += entries.size();
    report_->rejected += rejected;
    FeedContentStats& feed = report_->feeds[b.feed];
    feed.bytes += b.text.size();
    feed.entries += entries.size() + stats.errors - rejected;  // the values EntryKeyFor took
    feed.rejected += rejected;
    feed.looks_like_html |= html;
    processed_.fetch_add(entries.size(), std::memory_order_relaxed);
    return Status::Ok();
  }

  const IngestOptions& options_;
  ThreatTable* threats_;
  KeySorter* keys_;
  ClearSorter* clear_;
  IngestReport* report_ PT_GUARDED_BY(problems_mutex_);  // its counters and problems
  std::vector<std::thread> workers_;
  Mutex mutex_;
  CondVar not_empty_;  // a block was queued, or done_ was set
  CondVar not_full_;   // a block was taken, or error_ was set
  std::deque<Block> queue_ GUARDED_BY(mutex_);
  bool done_ GUARDED_BY(mutex_) = false;
  Status error_ GUARDED_BY(mutex_);
  Mutex problems_mutex_;
  std::vector<Problem> problems_ GUARDED_BY(problems_mutex_);
  std::atomic<uint64_t> processed_{0};
};

// Cuts one feed into blocks and queues them.
Status ReadFeed(Env* env, size_t feed, const FeedSpec& spec, const IngestOptions& options, Pipeline* pipeline,
                const std::function<void(uint64_t)>& progress) {
  URLGUARD_ASSIGN_OR_RETURN(auto file, SequentialFile::Open(spec.path));
  ByteSource source(std::move(file));
  std::string buf;
  bool more = true;
  while (more && buf.size() < kMaxFeedDetectBytes) {
    URLGUARD_ASSIGN_OR_RETURN(more, source.Read(&buf));
  }
  FeedSpec resolved = spec;
  if (resolved.format == FeedFormat::kAuto) resolved.format = DetectFeedFormat(spec.path, buf);
  if (!IsLineFormat(resolved.format)) {
    // Records may span lines: the whole feed, capped as before.
    URLGUARD_ASSIGN_OR_RETURN(std::string data, ReadFeedFile(env, spec.path));
    if (!pipeline->Push(Block{feed, resolved, std::move(data), 0})) return Status::Ok();
    return Status::Ok();
  }
  uint64_t lines = 0;
  bool skipping_long_line = false;
  while (true) {
    while (more && buf.size() < options.block_bytes) {
      URLGUARD_ASSIGN_OR_RETURN(more, source.Read(&buf));
    }
    if (skipping_long_line) {
      size_t nl = buf.find('\n');
      if (nl == std::string::npos) {
        buf.clear();
        if (!more) break;
        continue;
      }
      buf.erase(0, nl + 1);
      skipping_long_line = false;
    }
    if (buf.empty() && !more) break;
    size_t cut;
    if (!more) {
      cut = buf.size();
    } else {
      size_t nl = buf.rfind('\n');
      if (nl != std::string::npos) {
        cut = nl + 1;
      } else if (buf.size() > kMaxFeedLineBytes) {
        cut = buf.size();  // one over-long line: the parser reports it; the rest of it is skipped
        skipping_long_line = true;
      } else {
        continue;  // a line longer than a block but within the cap: read on
      }
    }
    Block b{feed, resolved, buf.substr(0, cut), lines};
    buf.erase(0, cut);
    lines += LinesIn(b.text);
    if (!pipeline->Push(std::move(b))) return Status::Ok();  // a worker failed; Finish reports it
    if (progress) progress(pipeline->processed());
    if (buf.empty() && !more) break;
  }
  return Status::Ok();
}

}  // namespace

Result<uint16_t> ThreatTable::Intern(const std::string& name) {
  MutexLock lock(&mutex_);
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  if (names_.size() >= kMaxThreatNames) {
    return Status::ResourceExhausted("more than " + std::to_string(kMaxThreatNames) + " threat names");
  }
  uint16_t id = static_cast<uint16_t>(names_.size());
  names_.push_back(name);
  ids_.emplace(name, id);
  return id;
}

std::vector<std::string> ThreatTable::names() const {
  MutexLock lock(&mutex_);
  return names_;
}

Status AddEntryRecord(const EntryKey& key, const std::string& threat_name, uint64_t seq, int writer,
                      ThreatTable* threats, KeySorter* keys, ClearSorter* clear) {
  URLGUARD_ASSIGN_OR_RETURN(uint16_t threat, threats->Intern(threat_name));
  return RecordEntry(key, threat, seq, writer, keys, clear);
}

Status IngestFeeds(Env* env, const std::vector<FeedSpec>& feeds, const IngestOptions& options, ThreatTable* threats,
                   KeySorter* keys, ClearSorter* clear, IngestReport* report,
                   const std::function<void(uint64_t)>& progress) {
  report->feeds.assign(feeds.size(), FeedContentStats{});
  Pipeline pipeline(options, threats, keys, clear, report);
  pipeline.Start();
  Status read;
  for (size_t i = 0; i < feeds.size() && read.ok(); ++i) {
    read = ReadFeed(env, i, feeds[i], options, &pipeline, progress);
    if (!read.ok()) read = read.WithContext(feeds[i].path);
  }
  Status work = pipeline.Finish();
  if (!read.ok()) return read;
  return work;
}

}  // namespace urlguard
