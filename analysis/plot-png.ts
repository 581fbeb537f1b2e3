// Renders the SVG plot to PNG with resvg (a Rust renderer shipped as a prebuilt npm binary), so no
// browser is needed. Text uses the system's fonts; DejaVu Sans is the one asked for first.

import { Resvg } from '@resvg/resvg-js';

export function renderPng(svg: string, scale = 2): Buffer {
  const resvg = new Resvg(svg, {
    background: '#ffffff',
    fitTo: { mode: 'zoom', value: scale },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
  });
  return Buffer.from(resvg.render().asPng());
}
