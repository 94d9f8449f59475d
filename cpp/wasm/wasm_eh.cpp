// The landing-pad side of WebAssembly C++ exceptions (-fwasm-exceptions), in place of libunwind's
// Unwind-wasm.o: the same nine symbols, so the linker never takes that object from the library.
//
// Why: a catch by type asks the personality routine which handler matches through one struct,
// __wasm_lpad_context. Emscripten 3.1.6's libunwind (in Debian's cache) declares it thread_local,
// but Debian's clang 14 compiles landing pads that address it as a plain global. In the -pthread
// builds the two are different memory, so the handler never saw the selector the personality
// wrote: every catch by type missed, the exception left the module as a bare
// WebAssembly.Exception instead of error_message()'s, and its object was never freed
// (simd-threads, Node 20: an overflow in attentionScores, or a truncated model file). Without
// -pthread, thread_local is a plain global anyway, so these are libunwind's semantics there too.
//
// One context for all threads, as the landing pads see it: two threads inside a catch by type at
// the same moment could read each other's selector. Only the calling thread catches by type (the
// bindings, model loading); the pool's workers catch only with catch (...), which reads no
// selector (ThreadPool::drain), and hand the exception to the caller.
#include <cstdint>

// libunwind's ABI as its unwind.h gives it for WebAssembly (not included: clang's own unwind.h
// comes first on the include path and declares some of these with other types).
extern "C" {

enum UnwindReason : int { kForeignExceptionCaught = 1 };
enum UnwindAction : int { kCleanupPhase = 2 };
struct UnwindException {
  uint64_t exception_class;
  void (*exception_cleanup)(UnwindReason, UnwindException*);
};
struct WasmLandingPadContext {
  uintptr_t lpad_index;  // set by the landing pad: which of the function's pads
  uintptr_t lsda;        // set by the landing pad: the function's exception table
  uintptr_t selector;    // set by the personality: which catch clause matches (0: none)
};
using Context = WasmLandingPadContext;  // libunwind's opaque _Unwind_Context, here

WasmLandingPadContext __wasm_lpad_context;

UnwindReason __gxx_personality_wasm0(int version, UnwindAction actions, uint64_t exception_class, UnwindException* e,
                                     Context* context);

// Called by every landing pad that catches by type. WebAssembly unwinds in one phase (the engine
// does the search), so the personality runs as the cleanup phase.
UnwindReason _Unwind_CallPersonality(void* exception) {
  auto* e = static_cast<UnwindException*>(exception);
  __wasm_lpad_context.selector = 0;
  return __gxx_personality_wasm0(1, kCleanupPhase, e->exception_class, e, &__wasm_lpad_context);
}

// Called by __cxa_throw: tag 0 is C++'s.
UnwindReason _Unwind_RaiseException(UnwindException* e) { __builtin_wasm_throw(0, e); }

// Called by __cxa_end_catch.
void _Unwind_DeleteException(UnwindException* e) {
  if (e->exception_cleanup) e->exception_cleanup(kForeignExceptionCaught, e);
}

// The personality's reads and writes of the context: register 1 is the selector; the "IP" is
// the pad's index, which the personality decrements and takes as 1-based, hence + 2.
void _Unwind_SetGR(Context* c, int index, uintptr_t value) {
  if (index == 1) c->selector = value;
}
uintptr_t _Unwind_GetIP(Context* c) { return c->lpad_index + 2; }
void _Unwind_SetIP(Context*, uintptr_t) {}
uintptr_t _Unwind_GetLanguageSpecificData(Context* c) { return c->lsda; }
uintptr_t _Unwind_GetRegionStart(Context*) { return 0; }

}  // extern "C"
