// Fuzzes nadaraya_watson(): kernels, bandwidths (any double) and sizes. Any input either throws
// attnlab::Error or gives finite predictions with weights that sum to 1 or 0.
#include "fuzz_common.hpp"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int64_t batch = fuzz::size(in, -1, 2), Nq = fuzz::size(in), Nk = fuzz::size(in),
                D = fuzz::size(in, -1, 3), Dv = fuzz::size(in, -1, 3);
  const Kernel kernel = static_cast<Kernel>(in.ConsumeIntegralInRange<int>(0, 3));
  const double h = in.ConsumeBool() ? in.ConsumeFloatingPoint<double>()
                                    : in.ConsumeFloatingPointInRange<double>(1e-300, 10.0);
  if (batch < 0 || Nq < 0 || Nk < 0 || D < 0 || Dv < 0) {
    std::vector<float> out(1);
    try {
      nadaraya_watson(nullptr, nullptr, nullptr, batch, Nq, Nk, D, Dv, kernel, h, out.data(),
                      nullptr, nullptr);
    } catch (const Error&) {
      return 0;
    }
    std::abort();
  }
  const auto q = fuzz::values(in, batch * Nq * D), k = fuzz::values(in, batch * Nk * D),
             v = fuzz::values(in, batch * Nk * Dv);
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(batch * Nq * Dv, 1)));
  std::vector<float> w(static_cast<size_t>(std::max<int64_t>(batch * Nq * Nk, 1)));
  try {
    nadaraya_watson(q.data(), k.data(), v.data(), batch, Nq, Nk, D, Dv, kernel, h, out.data(),
                    w.data(), nullptr);
  } catch (const Error&) {
    return 0;
  }
  fuzz::require_finite(out.data(), batch * Nq * Dv);
  fuzz::require_rows_normalised(w.data(), batch * Nq, Nk);
  return 0;
}
