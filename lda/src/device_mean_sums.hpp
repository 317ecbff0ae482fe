// Internal to bfly_lda_gpu: the running sums of output averaging on the device (IterationEngine::keeps_mean_sums),
// shared by the one-GPU engine and the ranks of a data-parallel run.
#pragma once

#include "bfly/jit/driver.hpp"
#include "bfly/ops/lda_iteration.hpp"

#include <algorithm>
#include <cstddef>
#include <span>

namespace bfly::lda::detail {

// theta's sums (D x K doubles, the documents of `iteration`) and phi's (V x K), allocated and zeroed on the first
// add, freed by clear(); each add costs two element-wise kernels instead of a copy of the state to the host.
class DeviceMeanSums {
 public:
  void add(rt::LdaIteration& iteration, const long long* doc_offsets, const rt::LdaPriors& priors) {
    const rt::LdaShape& shape = iteration.shape();
    if (theta_.size() == 0) {
      theta_ = zeroed(static_cast<std::size_t>(shape.docs * shape.K) * sizeof(double));
      phi_ = zeroed(static_cast<std::size_t>(shape.vocab * shape.K) * sizeof(double));
    }
    iteration.add_means(doc_offsets, priors, reinterpret_cast<double*>(theta_.get()),
                        reinterpret_cast<double*>(phi_.get()));
  }

  // Copies the sums out (zeros before the first add); an empty `phi` skips phi.
  void download(std::span<double> theta, std::span<double> phi) const {
    if (theta_.size() == 0) {
      std::fill(theta.begin(), theta.end(), 0.0);
      std::fill(phi.begin(), phi.end(), 0.0);
      return;
    }
    copy_out(theta, theta_);
    copy_out(phi, phi_);
  }

  void clear() {
    theta_ = rt::DeviceBuffer();
    phi_ = rt::DeviceBuffer();
  }

 private:
  static rt::DeviceBuffer zeroed(std::size_t bytes) {
    rt::DeviceBuffer buffer(std::max<std::size_t>(bytes, 8));
    rt::check(rt::driver().MemsetD8(buffer.get(), 0, buffer.size()), "cuMemsetD8(sums of the posterior means)");
    return buffer;
  }
  static void copy_out(std::span<double> to, const rt::DeviceBuffer& from) {
    if (to.empty()) return;
    rt::check(rt::driver().MemcpyDtoH(to.data(), from.get(), to.size() * sizeof(double)),
              "cuMemcpyDtoH(sums of the posterior means)");
  }

  rt::DeviceBuffer theta_, phi_;
};

}  // namespace bfly::lda::detail
