#include "progress_bar.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace specsim::cli {

ProgressBar::ProgressBar(std::atomic<std::size_t>& done, std::size_t total) : done_(done), total_(total) {
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      draw();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    draw();
    std::fputc('\n', stderr);
  });
}

ProgressBar::~ProgressBar() {
  stop_.store(true);
  thread_.join();
}

void ProgressBar::draw() const {
  const std::size_t d = std::min(done_.load(), total_);
  const int width = 40, filled = int(double(d) / double(std::max<std::size_t>(total_, 1)) * width);
  fmt::print(stderr, "\r[{:#<{}}{:<{}}] {:3.0f}% {}/{}", "", filled, "", width - filled,
             100.0 * double(d) / double(std::max<std::size_t>(total_, 1)), d, total_);
  std::fflush(stderr);
}

}  // namespace specsim::cli
