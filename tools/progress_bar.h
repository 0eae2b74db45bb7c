#pragma once
// A one-line progress bar on stderr (the sweep's, when stderr is a terminal).
#include <atomic>
#include <cstddef>
#include <thread>

namespace specsim::cli {

/// Redraws `[####    ]  40% done/total` on stderr every 100 ms until destroyed; the last draw
/// and a newline on destruction.
class ProgressBar {
 public:
  ProgressBar(std::atomic<std::size_t>& done, std::size_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

 private:
  void draw() const;
  std::atomic<std::size_t>& done_;
  std::size_t total_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace specsim::cli
