// Package scene reads satellite and drone products as their makers ship
// them: a Sentinel-2 L2A .SAFE folder or .zip, a Landsat Collection 2
// Level-2 folder or .tar, a Sentinel-2 L2A in ESA's EOPF Zarr format (a
// .zarr folder or .zip, Zarr v3 or v2 with consolidated metadata;
// eopf.go, Blosc chunks in blosc.go), a STAC item whose assets are local files
// or URLs, or a multi-band GeoTIFF orthomosaic. A STAC item or a GeoTIFF may itself
// be a URL: it and its assets are read by byte ranges over HTTP(S)
// (compute/remote), Planetary Computer links signed (compute/stac);
// OpenContext bounds those requests by a context, and OpenItem opens an
// item given as its JSON (a saved search's).
//
// Open reads the metadata only (sensor, date, tile or path/row, CRS, grid,
// each band's file, resolution, stored type, radiometry and nodata, the
// mask and the cloud share); archive members are read in place, never
// unpacked. Load reads the bands of the roles asked for at their stored
// type, on the finest band's grid (coarser bands by nearest neighbour),
// with the product's mask (SCL classes, QA_PIXEL bits, QA_RADSAT, an alpha
// band, saturated values) combined into one plane. The result is what the
// index engine takes: compute.BandInput with its compute.Radiometry, so
// integer bands reach the kernels as integers. docs/PRODUCTS.md states the
// layouts, the radiometry and mask rules, the limits against hostile
// files, and the measured speed.
package scene
