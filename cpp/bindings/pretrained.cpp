// embind for issue 16's pretrained checkpoints, built as a module of its own
// (attnlab-pretrained-<variant>, see CMakeLists.txt) so the home page's module stays its size.
// Marshalling only: heap pointers and numbers in, a small JSON status out ({"error": "..."} on
// failure: no C++ exception crosses into JavaScript); tensors stay in the heap and JavaScript
// copies them out through typed views at the pointers returned.
#include <emscripten/bind.h>
#include <malloc.h>

#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <string>

#include "attnlab/error.hpp"
#include "attnlab/pretrained.hpp"

using namespace attnlab;
using namespace attnlab::pretrained;

namespace {

struct Session {
  std::unique_ptr<Model> model;
  Output last;  // the latest forward's logits and attention, read by JavaScript in place
  std::vector<int32_t> ids, types;
};
std::map<int, Session> sessions;
int next_id = 1;
std::unique_ptr<ThreadPool> pool;  // pretrainedSetThreads(n): n > 1 on the simd-threads build

template <class T>
T* at(double p) { return reinterpret_cast<T*>(static_cast<uintptr_t>(p)); }

std::string quote(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o.push_back('\\'); o.push_back(static_cast<char>(c)); }
    else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o.push_back(static_cast<char>(c));
  }
  return o + "\"";
}

template <class F>
std::string guarded(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    return "{\"error\":" + quote(e.what()) + "}";
  } catch (const std::bad_alloc&) {
    return "{\"error\":\"out of memory: the WebAssembly heap could not grow enough for this checkpoint\"}";
  } catch (const std::exception& e) {
    return "{\"error\":" + quote(std::string("internal error: ") + e.what()) + "}";
  }
}

Session& session(int id) {
  auto it = sessions.find(id);
  require(it != sessions.end() && it->second.model, [] { return std::string("the model has been disposed"); });
  return it->second;
}

std::string header_length(double first8, double file_size) {
  return guarded([&] {
    return "{\"length\":" + std::to_string(safetensors_header_length(at<const uint8_t>(first8), static_cast<uint64_t>(file_size))) + "}";
  });
}

std::string open(std::string config, double header, double n, double file_size, double max_bytes) {
  return guarded([&] {
    const ModelConfig c = read_config(config);
    const SafetensorsIndex ix = parse_safetensors_header(at<const char>(header), static_cast<uint64_t>(n),
                                                         static_cast<uint64_t>(file_size));
    auto m = Model::create(c, ix, static_cast<uint64_t>(max_bytes));
    const int id = next_id++;
    sessions[id].model = std::move(m);
    const char* family = c.family == Family::GPT2 ? "gpt2" : c.family == Family::BERT ? "bert" : "gpt-neo";
    return "{\"id\":" + std::to_string(id) + ",\"architecture\":" + quote(c.architecture) + ",\"family\":\"" + family +
           "\",\"layers\":" + std::to_string(c.layers) + ",\"heads\":" + std::to_string(c.heads) +
           ",\"hidden\":" + std::to_string(c.hidden) + ",\"vocab\":" + std::to_string(c.vocab) +
           ",\"positions\":" + std::to_string(c.positions) + ",\"typeVocab\":" + std::to_string(c.type_vocab) +
           ",\"logits\":" + (sessions[id].model->outputs_logits() ? "true" : "false") +
           ",\"dataStart\":" + std::to_string(ix.data_start) +
           ",\"parameterBytes\":" + std::to_string(sessions[id].model->parameter_bytes()) + "}";
  });
}

std::string feed(int id, double offset, double ptr, double n) {
  return guarded([&] {
    session(id).model->feed(static_cast<uint64_t>(offset), at<const uint8_t>(ptr), static_cast<uint64_t>(n));
    return std::string("{}");
  });
}

std::string finish(int id) {
  return guarded([&] {
    session(id).model->finish();
    return std::string("{}");
  });
}

// ids (and BERT's token types, or 0) as int32 in the heap; extend: append to the decoder's cache.
std::string run(int id, double ids, int n, double types, bool attentions, bool extend) {
  return guarded([&] {
    Session& s = session(id);
    require(n >= 0, [] { return std::string("ids must not be empty"); });
    s.ids.assign(at<const int32_t>(ids), at<const int32_t>(ids) + n);
    if (types) s.types.assign(at<const int32_t>(types), at<const int32_t>(types) + n);
    s.last = Output{};
    s.last = extend ? s.model->extend(s.ids, attentions, pool.get())
                    : s.model->forward(s.ids, types ? &s.types : nullptr, attentions, pool.get());
    char b[160];
    std::snprintf(b, sizeof b, "{\"rows\":%lld,\"cols\":%lld,\"ctx\":%lld,\"logits\":%lu,\"attention\":%lu,\"cached\":%lld}",
                  static_cast<long long>(s.last.rows), static_cast<long long>(s.last.cols), static_cast<long long>(s.last.ctx),
                  static_cast<unsigned long>(reinterpret_cast<uintptr_t>(s.last.logits.data())),
                  static_cast<unsigned long>(reinterpret_cast<uintptr_t>(s.last.attention.data())),
                  static_cast<long long>(s.model->cached()));
    return std::string(b);
  });
}

void dispose(int id) { sessions.erase(id); }

std::string set_threads(int n) {
  return guarded([&] {
    pool.reset();
    if (n > 1) pool = std::make_unique<ThreadPool>(n);
    return std::string("{}");
  });
}

double heap_used() { return static_cast<double>(mallinfo().uordblks); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_pretrained) {
  emscripten::function("pretrainedHeaderLength", &header_length);
  emscripten::function("pretrainedOpen", &open);
  emscripten::function("pretrainedFeed", &feed);
  emscripten::function("pretrainedFinish", &finish);
  emscripten::function("pretrainedRun", &run);
  emscripten::function("pretrainedDispose", &dispose);
  emscripten::function("pretrainedSetThreads", &set_threads);
  emscripten::function("heapUsed", &heap_used);
}
