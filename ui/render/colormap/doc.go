// Package colormap turns an index plane into pictures: colour ramps, class
// tables, stretches, a fast lookup table (LUT) for on-screen viewports,
// memory-lean full-resolution paletted maps, legends and PNG export with a
// world file.
//
// # Ramps
//
// Three ramps follow the field's conventions (see Ramps):
//
//   - "rdylgn", the default: ColorBrewer's diverging red-yellow-green over
//     [-1, 1], as QGIS and Earth Engine users expect;
//   - "viridis": matplotlib's perceptually uniform ramp, for a stretch;
//   - "classes": the NDVI classes of Classes (no vegetation, bare,
//     sparse, moderate, dense) with their conventional colours. Class
//     bounds are absolute values, so a stretch does not apply to them.
//
// # Classes
//
// Classes are data: a ClassTable holds thresholds, names and colours,
// edited with WithThreshold, WithName and WithColor and stored as JSON
// ("#rrggbb" colours, null for the open ends). Presets gives the tables
// Canopy knows (NDVI, the default; dNBR burn severity; NDWI water; NDMI
// moisture; a symmetric change table), IndexClasses the table of an
// index's map of one date (none for an index without established
// classes), ChangeClasses the table of a change map, FromClasses colours
// any engine table from a ramp, and NewClasses builds the LUT of any
// table, so that the map, its legend and the statistics take the same
// colours from one place.
//
// # Stretch
//
// A continuous ramp spans [lo, hi]: [-1, 1] by default (Full), or a stretch
// computed from the data (MinMax, Percentiles, or StretchFor by name).
// Values outside the range take the colour of the nearer end; NaN (no data,
// 0/0) is fully transparent everywhere.
//
// # Lookup table and palette
//
// New builds a LUT: 4096 colours for on-screen rendering (RenderView) and a
// 256-entry palette for paletted images (Image, Legend, WritePNG). Palette
// index 0 is transparent (NaN), indices 1..239 are the ramp in equal steps
// (or the classes), and 240..255 are 16 greys from white to black used for
// the anti-aliased text of legends. A paletted 10980×10980 map takes 1 byte
// per pixel (120 MB) instead of 480 MB of RGBA.
//
// # Viewport
//
// RenderView draws the part of the plane a viewer sees: screen pixel (sx, sy)
// of the destination shows the image point (x0 + (sx+0.5)/zoom,
// y0 + (sy+0.5)/zoom). Zoomed in (zoom ≥ 1) it is nearest neighbour. Zoomed
// out, each screen pixel averages an s×s grid of point samples spread over
// its footprint (s = min(ceil(1/zoom), 3), NaN samples left out), a cheap
// supersampling that keeps one-pixel roads and field edges from flickering
// in and out of existence as the user pans, without building a pyramid.
// ViewPixel gives the image pixel under a screen pixel with the same rule,
// for a cursor read-out.
//
// # Export
//
// WritePNG writes the full-resolution map, optionally with a legend strip
// (and title) to the right of or below the map, and, when the GeoRef is
// valid, a world file (.pgw) so that GIS tools place it. The strip never
// moves the map's top-left corner, so the world file stays right. The file
// is written to a temporary name and renamed, so a failure never leaves a
// half-written file over an existing one.
package colormap
