/**
 * attnlab widgets: custom elements that draw attention. Importing this module registers
 * <attn-heatmap>, <attn-head-view>, <attn-model-view>, <attn-translate>, <attn-beam-tree> and
 * <attn-regression>. Each takes data by property (or JSON attributes), fires `attn-*` events,
 * exports PNG and SVG (toPNG(), toSVG(), download()), follows light/dark (prefers-color-scheme,
 * <html data-theme>, or its own `theme` attribute), and redraws when resized.
 */
export { AttnElement } from './base.js';
export { AttnHeatmap, type CellDetail } from './heatmap.js';
export { AttnHeadView } from './head-view.js';
export { AttnModelView, type ModelSelection } from './model-view.js';
export { AttnBeamTree, type BeamHypothesis } from './beam-tree.js';
export { AttnTranslate, alignmentRows, type Translator, type TranslationAttention, type TranslationResult } from './translate.js';
export { AttnRegression, samplePoints, truthFn, type Point, type RegressionResult } from './regression.js';
export { sharedLib, setSharedLib, rng, gaussian } from './lib.js';
export { paletteFor, scaleRGB, type Palette, type ScaleName } from './theme.js';
