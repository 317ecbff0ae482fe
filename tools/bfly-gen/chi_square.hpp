// The chi-square tail probability that bfly-gen demo and the bench use to judge a sampler's draws.
#pragma once

#include <algorithm>
#include <cmath>

namespace bfly::stats {

// Q(a, x) = Gamma(a, x) / Gamma(a), the regularised upper incomplete gamma function (series for x < a + 1,
// Lentz's continued fraction otherwise).
inline double gamma_q(double a, double x) {
  if (x <= 0.0) return 1.0;
  const double log_prefactor = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1.0) {
    double ap = a, term = 1.0 / a, sum = term;
    for (int n = 0; n < 200000; ++n) {
      ap += 1.0;
      term *= x / ap;
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-16) break;
    }
    return std::max(0.0, 1.0 - sum * std::exp(log_prefactor));
  }
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 200000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(log_prefactor) * h;
}

// P(chi-square with df degrees of freedom >= stat); 1 for df <= 0.
inline double chi_square_p(double stat, double df) {
  if (df <= 0) return 1.0;
  return gamma_q(0.5 * df, 0.5 * stat);
}

}  // namespace bfly::stats
