#include "common/threads.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "common/error.hpp"
#include "common/quote.hpp"

namespace discount {

namespace {

// Larger requests are the same as this one: far beyond any machine.
constexpr long long kHuge = 1000000000;

// "123" -> 123 (saturating at kHuge); nullopt unless every character is a digit.
std::optional<long long> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 4096) return std::nullopt;
  long long value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = std::min(kHuge, value * 10 + (c - '0'));
  }
  return value;
}

// The option's name (up to the first character Kokkos does not count as part
// of one) and whether a value follows it.
struct Option {
  std::string name;
  bool has_value = false;
  std::string value;
};

Option split_option(const std::string& arg) {
  std::size_t end = 2;
  while (end < arg.size() && (std::isalnum(static_cast<unsigned char>(arg[end])) || arg[end] == '-' || arg[end] == '_'))
    ++end;
  Option option{arg.substr(0, end), false, ""};
  if (end < arg.size()) {
    option.has_value = true;
    option.value = arg.substr(end);  // starts with '=' when well formed
  }
  return option;
}

bool one_of(const std::string& name, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

}  // namespace

bool is_thread_flag(const std::string& arg) {
  return one_of(split_option(arg).name, {"--kokkos-threads", "--kokkos-num-threads"});
}

void check_kokkos_args(const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    const Option option = split_option(arg);
    const std::string shown = printable_for_message(arg, 80);
    const bool threads = one_of(option.name, {"--kokkos-threads", "--kokkos-num-threads"});
    const bool single = threads || one_of(option.name, {"--kokkos-numa", "--kokkos-device-id", "--kokkos-device"});
    const bool devices = one_of(option.name, {"--kokkos-num-devices", "--kokkos-ndevices"});
    if (!single && !devices) continue;
    const char* what = threads ? "a whole number of threads, such as " : "a whole number, such as ";
    const std::string example = option.name + (devices ? "=2 or " + option.name + "=2,1" : threads ? "=4" : "=0");
    if (!option.has_value || option.value[0] != '=') throw usage_error(shown + ": needs " + what + example);
    const std::string value = option.value.substr(1);
    bool ok = false;
    if (single) {
      ok = whole_number(value).has_value();
    } else {
      const auto comma = value.find(',');
      ok = whole_number(value.substr(0, comma)).has_value() &&
           (comma == std::string::npos || whole_number(value.substr(comma + 1)).has_value());
    }
    if (!ok) throw usage_error(shown + ": needs " + what + example);
  }
}

ThreadLimit limit_threads(const std::vector<std::string>& kokkos_args, const char* kokkos_env, const char* omp_env,
                          int usable_cpus, int kokkos_cap) {
  long long limit = usable_cpus > 0 ? usable_cpus : kHuge;
  const bool capped = kokkos_cap > 0 && kokkos_cap < limit;
  if (capped) limit = kokkos_cap;

  long long request = 0;
  std::string source;
  for (const auto& arg : kokkos_args)
    if (is_thread_flag(arg)) {
      const Option option = split_option(arg);
      const auto value = option.has_value ? whole_number(option.value.substr(1)) : std::nullopt;
      if (value && *value > 0) {
        request = *value;  // the last one given counts
        source = printable_for_message(arg, 80);
      }
    }
  if (request == 0 && kokkos_env) {
    const auto value = whole_number(kokkos_env);
    if (!value)
      throw usage_error("KOKKOS_NUM_THREADS=" + quote_for_message(kokkos_env, 40) +
                        " is not a whole number of threads; unset it or give one such as 4");
    if (*value > 0) {
      request = *value;
      source = "KOKKOS_NUM_THREADS=" + std::string(kokkos_env);
    }
  }
  if (request == 0 && omp_env) {
    // The OpenMP runtime's own rule: the first level of a list such as
    // "8,4", spaces around it allowed, and a positive whole number.
    std::string text = omp_env;
    text = text.substr(0, text.find(','));
    const auto first = text.find_first_not_of(" \t"), last = text.find_last_not_of(" \t");
    const auto value = first == std::string::npos ? std::nullopt : whole_number(text.substr(first, last - first + 1));
    if (value && *value > 0) {
      request = *value;
      source = "OMP_NUM_THREADS=" + printable_for_message(omp_env, 40);
    }
  }

  ThreadLimit result;
  const std::string why = capped ? "the " + std::to_string(kokkos_cap) + " threads Kokkos' OpenMP backend supports"
                                 : "the " + std::to_string(limit) + " CPU(s) this process may use";
  if (request > 0) {
    result.requested = true;
    result.threads = static_cast<int>(std::min(request, limit));
    if (request > limit)
      result.warning = source + " asks for more threads than " + why + "; running " + std::to_string(limit);
  } else if (capped) {
    result.threads = kokkos_cap;
    result.warning = "this process may use " + std::to_string(usable_cpus) + " CPUs, more than " + why + "; running " +
                     std::to_string(kokkos_cap);
  }
  return result;
}

std::vector<std::string> with_thread_flag(const std::vector<std::string>& args, const std::string& flag, int threads) {
  std::vector<std::string> out;
  for (const auto& arg : args)
    if (!is_thread_flag(arg)) out.push_back(arg);
  out.push_back(flag + "=" + std::to_string(threads));
  return out;
}

}  // namespace discount
