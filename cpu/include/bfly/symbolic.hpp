// Symbolic table entries: a value that remembers which lane's weights, over which index range, it sums.
// Running the generated table build on these (CPU execution, bfly/lockstep.hpp) prints the tables of
// docs/DESIGN.md section 4 and the paper's Figures 4 and 8 from the very code the GPU runs.
#pragma once

namespace bfly {

struct Sym {
  int lane = -1;   // whose weights
  int first = 0;   // first index of the summed range
  int last = -1;   // last index of the summed range
  bool ok = true;  // false once two entries that are not adjacent ranges of one lane were added

  static Sym element(int lane, int index) { return Sym{lane, index, index, true}; }
};

// The sum of two adjacent ranges of one lane; anything else is marked not ok (the build would be wrong).
inline Sym operator+(const Sym& x, const Sym& y) {
  if (!x.ok || !y.ok || x.lane != y.lane) return Sym{x.lane, x.first, y.last, false};
  if (x.last + 1 == y.first) return Sym{x.lane, x.first, y.last, true};
  if (y.last + 1 == x.first) return Sym{x.lane, y.first, x.last, true};
  return Sym{x.lane, x.first, y.last, false};
}
inline Sym& operator+=(Sym& x, const Sym& y) { return x = x + y; }

}  // namespace bfly
