// Prototype, not part of the library: what one redraw costs the split kernels (docs/DESIGN.md section 6).
//
// When the search of the chosen part's table lands on a zero weight through rounding, the last CTA of the row draws
// again. The split kernels had one lane walk the whole row twice (bfly::sequential_draw, or for logits and distinct
// draws bfly::sequential_draw_excluding, which forms each weight's exponential); now that lane walks only the chosen
// part (bfly::sequential_draw_within, W columns). Each kernel here is one thread making that call on a row that sits
// in L2 (the split kernel has just read it), timed with events (median of 15 launches after 3), beside an empty
// launch. The row is random weights in [0, 1) (logits in [-8, 0)); u = 0.999 makes the walk reach the row's end.
//
// Build here, run on the GPU (bench/results/<device>-<date>-redraw-cost.txt):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Itemplates bench/prototypes/redraw_cost.cu -o build-deps/bin/redraw_cost
#include "bfly/sample_support.cuh"
#include "bfly/draws_support.cuh"

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

namespace {

__global__ void empty_launch(int* out) {
  if (threadIdx.x == 0) out[0] = 0;
}

__global__ void whole_row(const float* row, int K, int* out) {
  if (threadIdx.x == 0) out[0] = bfly::sequential_draw(row, K, 0.999f);
}

__global__ void whole_row_logits(const float* row, int K, int* out) {
  if (threadIdx.x == 0) {
    const bfly::RowLogitWeights<float> weights{row, 0.0f, static_cast<float>(bfly::kLog2e)};
    out[0] = bfly::sequential_draw_excluding(weights, K, 0.999f, static_cast<const int*>(nullptr), 0);
  }
}

__global__ void within_part(const float* row, int K, int part, int* out) {
  if (threadIdx.x == 0) {
    const bfly::RowWeights<float> weights{row};
    out[0] = bfly::sequential_draw_within(weights, part * 32, part * 32 + 32, K, 1e30f, static_cast<const int*>(nullptr),
                                          0);
  }
}

__global__ void within_part_logits(const float* row, int K, int part, int* out) {
  if (threadIdx.x == 0) {
    const bfly::RowLogitWeights<float> weights{row, 0.0f, static_cast<float>(bfly::kLog2e)};
    out[0] = bfly::sequential_draw_within(weights, part * 32, part * 32 + 32, K, 1e30f, static_cast<const int*>(nullptr),
                                          0);
  }
}

template <typename Launch>
float median_us(Launch launch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> times;
  for (int i = 0; i < 15; ++i) {
    cudaEventRecord(start);
    launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms * 1000.0f);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s\n", prop.name);
  std::printf("%8s %12s %14s %18s %14s %18s\n", "K", "empty_us", "whole_row_us", "whole_logits_us", "within_us",
              "within_logits_us");
  for (const int K : {8192, 32000, 128256, 262144}) {
    std::mt19937 rng(K);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<float> weights(K), logits(K);
    for (int k = 0; k < K; ++k) {
      weights[k] = uniform(rng);
      logits[k] = -8.0f * uniform(rng);
    }
    float *d_weights = nullptr, *d_logits = nullptr;
    int* d_out = nullptr;
    cudaMalloc(&d_weights, K * sizeof(float));
    cudaMalloc(&d_logits, K * sizeof(float));
    cudaMalloc(&d_out, sizeof(int));
    cudaMemcpy(d_weights, weights.data(), K * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_logits, logits.data(), K * sizeof(float), cudaMemcpyHostToDevice);
    const int part = K / 32 / 2;
    const float empty = median_us([&] { empty_launch<<<1, 32>>>(d_out); });
    const float row = median_us([&] { whole_row<<<1, 32>>>(d_weights, K, d_out); });
    const float row_logits = median_us([&] { whole_row_logits<<<1, 32>>>(d_logits, K, d_out); });
    const float part_us = median_us([&] { within_part<<<1, 32>>>(d_weights, K, part, d_out); });
    const float part_logits = median_us([&] { within_part_logits<<<1, 32>>>(d_logits, K, part, d_out); });
    int drawn = -2;
    cudaMemcpy(&drawn, d_out, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("%8d %12.1f %14.1f %18.1f %14.1f %18.1f   (last draw %d, %s)\n", K, empty, row, row_logits, part_us,
                part_logits, drawn, cudaGetErrorString(cudaGetLastError()));
    cudaFree(d_weights);
    cudaFree(d_logits);
    cudaFree(d_out);
  }
  return 0;
}
