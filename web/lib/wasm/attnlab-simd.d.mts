// Types for the Emscripten factory that scripts/build-wasm.sh writes next to the compiled library.
import type { ModuleFactory } from '../wasm-module.js';
declare const createAttnlabModule: ModuleFactory;
export default createAttnlabModule;
