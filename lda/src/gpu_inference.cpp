// The inference z-step on the GPU (see gpu_inference.hpp).
#include "bfly/lda/gpu_inference.hpp"

#include "bfly/jit/driver.hpp"
#include "bfly/ops/lda_z_step.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace bfly::lda {
namespace {

rt::DeviceBuffer upload(const void* data, std::size_t bytes) {
  rt::DeviceBuffer buffer(std::max<std::size_t>(bytes, 8));
  if (bytes > 0) rt::check(rt::driver().MemcpyHtoD(buffer.get(), data, bytes), "cuMemcpyHtoD");
  return buffer;
}

template <typename T>
class GpuFixedPhiZStep final : public FixedPhiZStep<T> {
 public:
  explicit GpuFixedPhiZStep(const GpuEngineOptions& options) : options_(options) {
    rt::current_context();  // fails here, with the reason, when no GPU can be used
  }

  std::string name() const override { return name_; }

  void bind(const Corpus& corpus, int K, std::span<const T> phi) override {
    static_assert(sizeof(long long) == sizeof(std::int64_t) && sizeof(int) == sizeof(std::int32_t));
    corpus_ = &corpus;
    K_ = K;
    const gen::KernelSpec spec = gpu_z_spec<T>(K, options_, mean_document_length(corpus));
    rt::LdaZOptions z;
    z.report_invalid_tokens = true;
    z.W = spec.W;
    z.variant = spec.variant;
    z.mean_document_length = mean_document_length(corpus);
    zstep_ = rt::LdaZStep(z);
    name_ = fmt::format("gpu {}", gen::kernel_name(spec));
    offsets_ = upload(corpus.doc_offsets.data(), corpus.doc_offsets.size() * sizeof(std::int64_t));
    words_ = upload(corpus.words.data(), corpus.words.size() * sizeof(std::int32_t));
    phi_ = upload(phi.data(), phi.size() * sizeof(T));
    theta_ = rt::DeviceBuffer(std::max<std::size_t>(static_cast<std::size_t>(corpus.num_docs()) * K * sizeof(T), 8));
    z_ = rt::DeviceBuffer(std::max<std::size_t>(corpus.words.size() * sizeof(std::int32_t), 8));
  }

  ZStepReport run(std::span<const T> theta, std::span<std::int32_t> z, std::uint64_t seed,
                  std::uint32_t iteration) override {
    if (theta.size() != static_cast<std::size_t>(corpus_->num_docs()) * K_ || z.size() != corpus_->words.size())
      throw Error(fmt::format("GpuFixedPhiZStep::run: theta has {} entries, z {}; the bound corpus needs {} and {}",
                              theta.size(), z.size(), corpus_->num_docs() * K_, corpus_->words.size()));
    ZStepReport report;
    if (corpus_->num_docs() == 0) return report;
    rt::check(rt::driver().MemcpyHtoD(theta_.get(), theta.data(), theta.size() * sizeof(T)), "cuMemcpyHtoD");
    const rt::LdaZReport r =
        zstep_.run(reinterpret_cast<const T*>(theta_.get()), K_, reinterpret_cast<const T*>(phi_.get()), K_,
                   reinterpret_cast<const long long*>(offsets_.get()), reinterpret_cast<const int*>(words_.get()),
                   reinterpret_cast<int*>(z_.get()), corpus_->num_docs(), K_, seed, iteration);
    rt::check(rt::driver().MemcpyDtoH(z.data(), z_.get(), z.size() * sizeof(std::int32_t)), "cuMemcpyDtoH");
    report.invalid_tokens = r.invalid_tokens;
    report.first_invalid = r.first_invalid_token;
    return report;
  }

 private:
  GpuEngineOptions options_;
  rt::LdaZStep zstep_;
  const Corpus* corpus_ = nullptr;
  int K_ = 0;
  std::string name_ = "gpu";
  rt::DeviceBuffer offsets_, words_, phi_, theta_, z_;
};

}  // namespace

template <typename T>
std::unique_ptr<FixedPhiZStep<T>> gpu_fixed_phi_zstep(const GpuEngineOptions& options) {
  return std::make_unique<GpuFixedPhiZStep<T>>(options);
}

template std::unique_ptr<FixedPhiZStep<float>> gpu_fixed_phi_zstep<float>(const GpuEngineOptions&);
template std::unique_ptr<FixedPhiZStep<double>> gpu_fixed_phi_zstep<double>(const GpuEngineOptions&);

}  // namespace bfly::lda
