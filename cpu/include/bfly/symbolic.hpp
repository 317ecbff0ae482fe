// Symbolic table entries: a value that remembers which lane's weights, over which index range, it sums, and in
// which tree of additions. Running the generated table build on these (CPU execution, bfly/lockstep.hpp) prints the
// tables of docs/DESIGN.md section 4 and the paper's Figures 4 and 8 from the very code the GPU runs.
#pragma once

namespace bfly {

struct Sym {
  int lane = -1;   // whose weights
  int first = 0;   // first index of the summed range
  int last = -1;   // last index of the summed range
  bool ok = true;  // false once two entries that are not adjacent ranges of one lane were added
  // The tree of additions that made this sum, hashed: equal for two sums of the same pairs nested alike, whichever
  // operand of each addition came first. Such sums are equal bit for bit in floating point (addition is
  // commutative, not associative).
  unsigned long long tree = 0;

  static Sym element(int lane, int index) { return Sym{lane, index, index, true, leaf_tree(lane, index)}; }
  static unsigned long long leaf_tree(int lane, int index) {
    return mix(0x9e3779b97f4a7c15ull ^ (static_cast<unsigned long long>(lane) << 32 | static_cast<unsigned>(index)));
  }
  static unsigned long long mix(unsigned long long z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  static unsigned long long sum_tree(unsigned long long a, unsigned long long b) {
    return mix((a < b ? a : b) * 31 + mix(a < b ? b : a));
  }
};

// The sum of two adjacent ranges of one lane; anything else is marked not ok (the build would be wrong).
inline Sym operator+(const Sym& x, const Sym& y) {
  const unsigned long long tree = Sym::sum_tree(x.tree, y.tree);
  if (!x.ok || !y.ok || x.lane != y.lane) return Sym{x.lane, x.first, y.last, false, tree};
  if (x.last + 1 == y.first) return Sym{x.lane, x.first, y.last, true, tree};
  if (y.last + 1 == x.first) return Sym{x.lane, y.first, x.last, true, tree};
  return Sym{x.lane, x.first, y.last, false, tree};
}
inline Sym& operator+=(Sym& x, const Sym& y) { return x = x + y; }

}  // namespace bfly
