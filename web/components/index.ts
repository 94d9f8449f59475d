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

import type { CellDetail } from './heatmap.js';
import type { ModelSelection } from './model-view.js';
import type { BeamHypothesis } from './beam-tree.js';
import type { TranslationResult } from './translate.js';
import type { Point, RegressionResult } from './regression.js';
import type { SentenceAttention } from './lib.js';

declare global {
  /**
   * The widgets' events (CustomEvents that bubble out of their shadow roots), so that a listener's
   * `e.detail` is typed without a cast.
   */
  interface HTMLElementEventMap {
    /** <attn-heatmap>: the cell under the pointer or the keyboard cursor. */
    'attn-hover': CustomEvent<CellDetail>;
    /** <attn-heatmap>: the cell pinned by a click or Enter; null when unpinned. */
    'attn-pin': CustomEvent<CellDetail | null>;
    /** <attn-head-view>: the heads shown, 0-based. */
    'attn-heads': CustomEvent<{ active: number[] }>;
    /** A `model`/`src` loaded: the head and model views' attention, or <attn-translate>'s attributes. */
    'attn-loaded': CustomEvent<SentenceAttention | { model: string | null; src: string | null }>;
    /** <attn-model-view>: the enlarged layer and head (0-based); null when closed. */
    'attn-select': CustomEvent<ModelSelection | null>;
    /** <attn-regression>: the new curve and weights. */
    'attn-change': CustomEvent<RegressionResult>;
    /** <attn-regression>: the training points after an edit. */
    'attn-points': CustomEvent<{ points: Point[] }>;
    /** <attn-translate>: a translation. */
    'attn-translated': CustomEvent<TranslationResult>;
    /** <attn-translate>: the playback's step and the piece written there. */
    'attn-step': CustomEvent<{ step: number; token: string }>;
    /** <attn-beam-tree>: the hypothesis picked with the keyboard, and its number (0-based). */
    'attn-beam': CustomEvent<BeamHypothesis & { index: number }>;
  }
}
