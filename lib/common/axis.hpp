// The three axes of the data (cv[date][id][num]) and their names. Shared by
// every folder: config names them, plan cuts along them, io lays files out by them.
#pragma once

#include <optional>
#include <string>

namespace discount {

enum class Axis : int { date = 0, id = 1, num = 2 };

inline const char* axis_name(Axis a) {
  switch (a) {
    case Axis::date: return "date";
    case Axis::id: return "id";
    case Axis::num: return "num";
  }
  return "?";
}

// "auto" for an empty chunk axis, else axis_name.
inline std::string chunk_axis_name(const std::optional<Axis>& a) { return a ? axis_name(*a) : "auto"; }

}  // namespace discount
