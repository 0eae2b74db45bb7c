#include "diagnose/dp_rank_windows.h"

#include <algorithm>
#include <set>

namespace specsim {

namespace {

using ingest::DecodeLine;

// One window's lines as one server-wide line (the first line's place and time).
DecodeLine window_sum(const std::vector<const DecodeLine*>& w) {
  DecodeLine s = *w.front();
  s.dp_rank.reset();
  s.running_req = 0, s.tokens = 0, s.gen_tok_s = 0;
  double len_w = 0, len = 0, rate_w = 0, rate = 0;
  for (const DecodeLine* d : w) {
    s.running_req += d->running_req, s.tokens += d->tokens, s.gen_tok_s += d->gen_tok_s;
    s.first_of_launch = s.first_of_launch || d->first_of_launch;
    if (d->since_previous_s) s.since_previous_s = std::max(s.since_previous_s.value_or(0.0), *d->since_previous_s);
    const double weight = std::max(1, d->running_req);
    if (d->accept_len) len += weight * *d->accept_len, len_w += weight;
    if (d->accept_rate) rate += weight * *d->accept_rate, rate_w += weight;
  }
  s.accept_len.reset(), s.accept_rate.reset();
  if (len_w > 0) s.accept_len = len / len_w;
  if (rate_w > 0) s.accept_rate = rate / rate_w;
  return s;
}

// Windows of consecutive tagged lines: a window closes when a rank repeats or the launch changes.
template <class F>
void for_each_window(const ingest::SglangLog& log, F&& f) {
  std::vector<const DecodeLine*> w;
  std::set<int> ranks;
  for (const auto& d : log.decode) {
    const bool close = !w.empty() && (!d.dp_rank || !w.front()->dp_rank || ranks.count(*d.dp_rank) ||
                                      d.server_args_index != w.front()->server_args_index);
    if (close) f(w), w.clear(), ranks.clear();
    w.push_back(&d);
    if (d.dp_rank) ranks.insert(*d.dp_rank);
  }
  if (!w.empty()) f(w);
}

}  // namespace

int dp_ranks_in(const ingest::SglangLog& log) {
  int most = 0;
  for_each_window(log, [&](const std::vector<const DecodeLine*>& w) {
    if (w.front()->dp_rank) most = std::max(most, static_cast<int>(w.size()));
  });
  return most;
}

ingest::SglangLog sum_dp_ranks(const ingest::SglangLog& log) {
  if (std::none_of(log.decode.begin(), log.decode.end(), [](const DecodeLine& d) { return d.dp_rank.has_value(); }))
    return log;
  ingest::SglangLog out = log;
  out.decode.clear();
  for_each_window(log, [&](const std::vector<const DecodeLine*>& w) { out.decode.push_back(window_sum(w)); });
  return out;
}

}  // namespace specsim
