// attnlab's training engine: a reverse-mode tape over 2-D float tensors.
//
// One mechanism: every op (ops.hpp, loss.hpp) is a plain function that computes its forward
// result into a new tensor owned by the tape and, when any input needs a gradient, records one
// backward closure. The closures run in reverse order in Tape::backward. Each op's backward is
// checked against finite differences in tests/cpp/test_nn_grad.cpp. Sequences are handled by the
// caller (rows = batch x time, laid out as the op documents). Deterministic: an inference tape may
// lend its int8 products a thread pool (each output is still one task's, so the same bits).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "attnlab/nn/gemm.hpp"

namespace attnlab {
class ThreadPool;
}

namespace attnlab::nn {

struct Tensor {
  int64_t r = 0, c = 0;           // rows x cols, row-major
  std::vector<float> v;           // values
  std::vector<float> g;           // gradient, when has_grad (sized on first use; a recycled node keeps it)
  bool has_grad = false;
  bool requires_grad = false;
  // Weights loaded from an int8 model file keep their int8 rows (zero-padded to q8_stride, a
  // multiple of 16; packed in tiles of 8 rows by kernels::Q8Layout) and per-row scales:
  // inference linears multiply with those (gemm_nt_q8).
  std::vector<int8_t> q8;
  std::vector<float> q8_scale;
  int64_t q8_stride = 0;
  bool q8_quads = false;  // q8's layout (kernels::Q8Layout)
  int64_t size() const { return r * c; }
  // The gradient, zeroed on first use.
  float* grad() {
    if (!has_grad || g.size() != v.size()) {
      g.assign(v.size(), 0.f);
      has_grad = true;
    }
    return g.data();
  }
  // The gradient for a backward that writes every element: `accumulate` says whether another op's
  // part is already there (add to it) or not (assign 0.f + value: the bits of adding to zeros),
  // so the first writer skips zeroing it. A recycled node's buffer is resized, which fills only
  // where it grows. Zeroing first was 3.4% of a perf profile of the shipped Transformer recipe.
  float* grad_slot(bool& accumulate) {
    accumulate = has_grad && g.size() == v.size();
    if (!accumulate) {
      g.resize(v.size());
      has_grad = true;
    }
    return g.data();
  }
};
using T = Tensor*;

class Tape {
 public:
  // When false, ops record nothing (inference).
  bool grad_enabled = true;
  // Threads for the int8 weight products of inference (a translator's decode); null: this thread.
  ThreadPool* pool = nullptr;
  // The fp32 products' packing space, kept between ops and passes.
  GemmScratch gemm;
  // A zeroed r x c tensor (a recycled node when clear() left one).
  T make(int64_t r, int64_t c, bool rg = false);
  // The same, left as the recycled node held it: for an op that writes every element (a product's
  // output), which would otherwise pay for zeroing it first.
  T make_uninit(int64_t r, int64_t c, bool rg = false);
  // A tensor holding constant data (no gradient).
  T constant(int64_t r, int64_t c, std::vector<float> v);
  void record(std::function<void()> f) { backs_.push_back(std::move(f)); }
  // Seeds d(loss) = 1 and runs the recorded closures in reverse.
  void backward(T loss);
  // Forgets the nodes but keeps them, buffers and all, for the next pass: a decoder's steps (and
  // a trainer's batches) repeat the same sequence of shapes, so they stop allocating and freeing
  // once the first pass has sized every node. Pointers from before clear() must not be used.
  void clear() {
    backs_.clear();
    used_ = 0;
  }
  size_t num_nodes() const { return used_; }

 private:
  // The next node, recycled or new, with no gradient and the given shape (values untouched).
  Tensor& node(int64_t r, int64_t c);
  std::deque<Tensor> nodes_;  // a deque: pointers to nodes stay valid as it grows
  size_t used_ = 0;
  std::vector<std::function<void()>> backs_;
};

// A named trainable parameter: a tensor that lives outside the tape.
struct Param {
  std::string name;
  std::vector<int64_t> shape;  // logical shape (for the weights file)
  Tensor t;
};

}  // namespace attnlab::nn

#include "attnlab/nn/loss.hpp"
#include "attnlab/nn/ops.hpp"
