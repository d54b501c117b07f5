// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Progress for long runs, on one line of stderr that is redrawn in place: the phase of the run and the step in it
// ("[3/4] write: snapshot"), the entries or records done, their rate and the elapsed time. Only when stderr is a
// terminal: piped or redirected to a file, nothing is written, so logs hold only the final report.
#ifndef URLGUARD_TOOLS_PROGRESS_H_
#define URLGUARD_TOOLS_PROGRESS_H_

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace urlguard {

class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
  // Cheap to call per entry: prints at most every 65536 entries.
  void Tick(uint64_t done) {
    if (!tty_ || (done & 0xffff) != 0) return;
    Show(done);
  }
  // `done` entries of the current phase (or of the whole run when no phase was named).
  void Show(uint64_t done) {
    if (!tty_) return;
    done_ = done;
    Draw();
  }
  // A phase (number `index` of `count`, named `name`) or a step within it begins, or moves on to `done` records.
  void Phase(int index, int count, const char* name, std::string_view step, uint64_t done) {
    if (!tty_) return;
    if (name != phase_ || step != step_) phase_start_ = Elapsed();
    label_ = "[" + std::to_string(index) + "/" + std::to_string(count) + "] " + name;
    if (!step.empty()) label_ += std::string(": ") + std::string(step);
    phase_ = name;
    step_ = std::string(step);
    done_ = done;
    Draw();
  }
  void Done() {
    if (tty_ && shown_) std::fprintf(stderr, "\r\033[K");
  }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  void Draw() {
    const double s = Elapsed();
    const double in_phase = s - phase_start_;
    // "\033[K" clears what a longer previous line left to the right.
    if (done_ == 0) {
      std::fprintf(stderr, "\r  %s, %.1f s elapsed\033[K", label_.empty() ? "working" : label_.c_str(), s);
    } else {
      std::fprintf(stderr, "\r  %s%s%llu entries, %.0f entries/s, %.1f s elapsed\033[K", label_.c_str(),
                   label_.empty() ? "" : "  ", static_cast<unsigned long long>(done_),
                   done_ / (in_phase > 0 ? in_phase : 1), s);
    }
    std::fflush(stderr);
    shown_ = true;
  }

  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::string label_;   // "[3/4] write: snapshot"; empty until a phase is named
  std::string phase_;   // the current phase's name and step, to notice when they change
  std::string step_;
  double phase_start_ = 0;  // seconds since start_ when the current step began (for its rate)
  uint64_t done_ = 0;
};

}  // namespace urlguard

#endif  // URLGUARD_TOOLS_PROGRESS_H_
