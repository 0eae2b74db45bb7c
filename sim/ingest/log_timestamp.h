#pragma once
// The timestamp a server log line starts with, as SGLang's logger writes it:
//   [2025-10-22 10:27:57 TP0] Decode batch. ...          (date and time, in brackets)
//   2025-12-04 20:35:53 INFO 151972 [...] Decode batch. ...
//   2026-06-07 10:59:31,659 [INFO] sglang...: Decode batch, ...   (milliseconds)
//   [04:40:55 TP0] Decode batch. ...                     (older SGLang: time of day only)
#include <optional>
#include <string_view>

namespace specsim::ingest {

/// A line's timestamp: seconds since 1970-01-01 (a date and a time), or since midnight (a time
/// of day only, `date` false).
struct LogTimestamp {
  double s = 0;
  bool date = false;
};

/// The first `YYYY-MM-DD HH:MM:SS[.,fraction]` (or, without a date, `HH:MM:SS[.,fraction]`) in
/// `text`; nullopt when there is none or its fields are out of range (month 13, minute 61).
std::optional<LogTimestamp> find_log_timestamp(std::string_view text);

/// Seconds from `earlier` to `later`: nullopt when they are of different kinds or `later` is
/// before `earlier` (a time of day that went back is taken as the next day).
std::optional<double> seconds_between(const LogTimestamp& earlier, const LogTimestamp& later);

}  // namespace specsim::ingest
