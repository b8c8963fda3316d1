// Package zonal computes per-stand statistics of an index plane with
// partial-pixel coverage weights, as exactextract does.
//
// Every pixel a stand touches is weighted by the fraction of its area the
// stand covers, computed exactly (polygon-cell intersection area over cell
// area) by accumulating each polygon edge's signed area through the cells
// it crosses, row by row, and a running sum along each row that fills the
// interior with 1; holes and multipolygons are handled by orienting shells
// +1 and holes −1. From the weights and the valid pixel values come, per
// stand: the covered pixel count, the valid one, the valid area in
// hectares, the weighted mean, standard deviation, min, max, median, 10th
// and 90th percentiles (exactextract's weighted form of NumPy's linear
// quantile), and hectares per value class.
//
// Compute streams over the raster a block of rows at a time (a Blocks;
// Plane wraps a plane in memory) and holds only the stands that the
// current block crosses, so any raster size and any number of stands fit
// in bounded memory. WriteCSV writes the columns of the command line's
// zonal --csv; GPKGColumns and GPKGRows feed vector.WriteGPKG. The
// algorithm and definitions are in docs/ZONAL.md. StandSeries gives one
// stand's mean and median on every date of a stack's cube, with the same
// weights and definitions, and its masked share.
package zonal
