// Copyright urlguard authors.
//
// Progress for long runs: entries per second and elapsed time on a terminal (stderr), silent otherwise.
#ifndef URLGUARD_TOOLS_PROGRESS_H_
#define URLGUARD_TOOLS_PROGRESS_H_

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace urlguard {

class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
  // Cheap to call per entry: prints at most every 65536 entries.
  void Tick(uint64_t done) {
    if (!tty_ || (done & 0xffff) != 0) return;
    Show(done);
  }
  void Show(uint64_t done) {
    if (!tty_) return;
    double s = Elapsed();
    std::fprintf(stderr, "\r  %llu entries, %.0f entries/s, %.1f s elapsed   ",
                 static_cast<unsigned long long>(done), done / (s > 0 ? s : 1), s);
    shown_ = true;
  }
  void Done() {
    if (tty_ && shown_) std::fprintf(stderr, "\r%70s\r", "");
  }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace urlguard

#endif  // URLGUARD_TOOLS_PROGRESS_H_
