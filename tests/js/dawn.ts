// The GPU of the Node tests: Dawn (npm `webgpu`) on SwiftShader's Vulkan, which Debian's chromium
// ships. One instance per test file (each runs in its own process), made on import.
import { existsSync } from 'node:fs';
import { create } from 'webgpu';

// Read by the Vulkan loader when Dawn opens its instance, i.e. at create() below, not at import.
process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
// Dawn's instance must outlive every adapter and device it made: kept for the whole file.
export const gpu = create([]) as unknown as GPU;

/** For a beforeAll: an Error naming the setup step when there is no Vulkan driver or no adapter. */
export async function requireDawn(): Promise<void> {
  if (!existsSync(process.env.VK_ICD_FILENAMES!)) throw new Error(`no Vulkan ICD at ${process.env.VK_ICD_FILENAMES}: install Debian's chromium (scripts/setup.sh)`);
  if (!(await gpu.requestAdapter())) throw new Error('Dawn found no WebGPU adapter: is libvulkan1 installed (scripts/setup.sh)?');
}
