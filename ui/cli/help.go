package cli

import (
	"canopy/compute/request"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// help is what `canopy CMD --help` prints before the flags: the synopsis,
// what the command does in a sentence, and two examples to copy.
type help struct {
	synopsis string
	about    string
	examples [2]string
}

// helps holds every command's help, keyed by the flag set's name after
// "canopy " (TestEveryCommandHelp checks each command has one).
var helps = map[string]help{
	"backends": {"canopy backends [--json]",
		"Lists each backend: available here or why not, and its device.",
		[2]string{"canopy backends", "canopy backends --json"}},
	"indices": {"canopy indices [--json]",
		"Lists the index catalogue: name, formula, roles needed, range.",
		[2]string{"canopy indices", "canopy indices --json"}},
	"scene": {"canopy scene PATH|URL [--json]",
		"Says what a product holds: sensor, date, tile, CRS, bands (role, resolution, scale, offset), cloud share.",
		[2]string{
			"canopy scene S2B_MSIL2A_20240612T103629_N0510_R008_T32UNE_20240612T134015.zip",
			"canopy scene LC08_L2SP_196024_20230815_20230822_02_T1 --json"}},
	"compute": {"canopy compute INPUT [--index NAME[,NAME...] | --expr EXPR] [--backend NAME[:MODE]|auto]\n" +
		"                      [--mask auto|none] [--tif OUT.tif] [--png OUT.png] [--legend] [--layout OUT] [--json]",
		"Computes indices over a product or bands and writes a COG, a coloured PNG or a print layout.\n" +
			"INPUT is --scene PATH|URL, or --red F[:B] --nir F[:B], or --band ROLE=F[:B] (repeatable).",
		[2]string{
			"canopy compute --scene S2B_MSIL2A_20240612T103629_N0510_R008_T32UNE_20240612T134015.zip --index ndvi,evi --tif indices.tif",
			"canopy compute --red B04.tif --nir B08.tif --png ndvi.png --legend --json"}},
	"zonal": {"canopy zonal INPUT [--index NAME] --stands FILE[:LAYER] [--id FIELD] --csv OUT.csv [--gpkg OUT.gpkg]",
		"Summarises an index per stand: pixels, area and valid area in hectares, mean, median, spread,\n" +
			"hectares per class, then the stand's own attributes.",
		[2]string{
			"canopy zonal --scene S2B_MSIL2A_20240612T103629_N0510_R008_T32UNE_20240612T134015.zip --stands stands.gpkg --id stand_id --csv stands.csv",
			"canopy zonal --red B04.tif --nir B08.tif --stands stands.gpkg:compartments --csv stands.csv --gpkg stands_ndvi.gpkg"}},
	"change": {"canopy change --before PATH --after PATH [--bands ROLE=B,...] [--index NAME] [--classes T,...]\n" +
		"                     [--tif OUT] [--png OUT] [--stands F --csv OUT] [--json]",
		"Maps before − after of an index (a loss of vegetation is positive, as dNBR) with hectares per class.",
		[2]string{
			"canopy change --before 2023-07.zip --after 2024-07.zip --index nbr --tif dnbr.tif --png dnbr.png --legend",
			"canopy change --before before.tif --after after.tif --bands red=3,nir=4 --stands stands.gpkg --csv change.csv --json"}},
	"batch": {"canopy batch --out DIR [--bands ROLE=B,...] [--index NAME[,..]] [--shard I/N|env] [--jobs K] PATH... | --list FILE\n" +
		"       canopy batch --out DIR [--shard I/N|env] composite|monitor STACK... [their flags] --tif NAME.tif",
		"Computes indices for many scenes into DIR, one line per scene in DIR/batch.jsonl; a re-run skips what is done.\n" +
			"With composite or monitor: part I of N of the area into DIR/NAME.part-I-of-N.tif; the task that finds\n" +
			"every part done merges them into DIR/NAME.tif.",
		[2]string{
			"canopy batch --out results --index ndvi,ndmi downloads/*.zip",
			"canopy batch --out results --list scenes.txt --shard env --jobs 2"}},
	"bench": {"canopy bench [--size N[,N...]] [--backends all|a,b] [--index NAME[,NAME...]] [--repeat K]\n" +
		"                    [--scene noise|landscape] [--json] [--chart OUT.png]\n" +
		"       canopy bench --resident [--size N] [--backends a,b] [--view WxH] [--repeat K] [--json]",
		"Times every backend's phases (setup, upload, kernel, download) on a generated scene, medians with the spread,\n" +
			"against the host-copy ceiling; --resident times a map viewer's steps with the bands kept on the device.",
		[2]string{
			"canopy bench --size 1024,2048,4096 --chart bench.png",
			"canopy bench --backends gl,cuda --index ndvi,evi --repeat 20 --json"}},
	"bench --resident": {"canopy bench --resident [--size N] [--backends a,b] [--view WxH] [--repeat K] [--json]",
		"Times a map viewer's steps (pan, zoom, index change, re-colour) on a Sentinel-2-sized scene whose bands\n" +
			"stay where each backend computes (the GPU's memory, or the host for CPU backends).",
		[2]string{
			"canopy bench --resident",
			"canopy bench --resident --backends c,gl --size 4096 --view 1440x900 --json"}},
	"fake": {"canopy fake --size N[xM] [--seed S] [--scene noise|landscape] --red R.tif --nir N.tif",
		"Writes a generated, reproducible scene as two GeoTIFF bands.",
		[2]string{
			"canopy fake --size 2048 --red red.tif --nir nir.tif",
			"canopy fake --size 4096x2048 --scene landscape --seed 7 --red red.tif --nir nir.tif"}},
	"warp": {"canopy warp INPUT... [--crs EPSG:N] [--res M] [--bbox W,S,E,N|--like F|--stands F]\n" +
		"                   [--resampling nearest|bilinear|cubic|average] [--backend go|go-parallel|c|gl|cuda] --tif OUT",
		"Reprojects and mosaics bands onto one grid, written as a COG.",
		[2]string{
			"canopy warp T32UQD_B04.tif T33UUU_B04.tif --crs EPSG:32633 --res 10 --resampling bilinear --tif B04_33N.tif",
			"canopy warp B04.tif --like reference.tif --tif B04_on_reference.tif"}},
	"search": {"canopy search --collection C --bbox W,S,E,N|--stands F --datetime A/B [--cloud P]\n" +
		"                     [--api earth-search|planetary-computer|URL] [--max N] [--json]",
		"Lists the scenes of a STAC API over an area and a season.",
		[2]string{
			"canopy search --collection sentinel-2-l2a --bbox 10.0,51.0,10.2,51.1 --datetime 2024-06-01/2024-08-31 --cloud 20",
			"canopy search --collection landsat-c2-l2 --stands stands.gpkg --datetime 2023-05-01/2023-09-30 --api planetary-computer --json"}},
	"stack": {"canopy stack PATH|SEARCH.json... [--list FILE] [--bands ROLE=B,...] [--index NAME] [--grid SPEC] [--json]",
		"Lists a stack's dates (from the products' metadata or STAC items, a saved search's items, a GeoTIFF's\n" +
			"ACQUISITIONDATE or DateTime, a date in the file name, or a path,date list), their sensors and each date's\n" +
			"valid share over the common grid. composite and monitor take the same STACK.",
		[2]string{
			"canopy stack S2*_MSIL2A_2024*.zip --index ndmi",
			"canopy stack --list dates.csv --bands red=3,nir=4 --grid utm,10 --json"}},
	"composite": {"canopy composite STACK... --period FROM/TO [--stat median|max-ndvi|pNN] [--index NAME]\n" +
		"                        [--devices all|N] [--shard I/N|env] --tif OUT [--json]",
		"Composites a period of a stack pixel by pixel: the median, the greatest value (and its date) or a percentile\n" +
			"of the valid dates, with the count of valid dates, as a COG.",
		[2]string{
			"canopy composite S2*_MSIL2A_2024*.zip --period 2024-06/2024-08 --stat median --tif summer2024.tif",
			"canopy composite --list dates.csv --bands red=3,nir=4 --period 2023/2023 --stat max-ndvi --tif max2023.tif"}},
	"monitor": {"canopy monitor STACK... --index NAME --history FROM/TO --monitor FROM/ [--harmonics K] [--rule mosum|anomaly]\n" +
		"                      [--stands F [--csv OUT] [--gpkg OUT]] [--png OUT] [--layout OUT.pdf]\n" +
		"                      [--devices all|N] [--shard I/N|env] --tif OUT [--json]",
		"Fits a season-trend model on the history and watches the monitoring period for breaks (BFAST-monitor's MOSUM,\n" +
			"as R's strucchange) or anomalies (fordead's rule): break date, magnitude, confidence per pixel, alerts per stand.",
		[2]string{
			"canopy monitor S2*_MSIL2A_*.zip --index ndmi --history 2018-01-01/2021-12-31 --monitor 2022-01-01/ --harmonics 2 --tif alerts.tif",
			"canopy monitor --list dates.csv --index ndmi --history 2019/2021 --monitor 2022/ --rule anomaly --threshold 0.08 --stands stands.gpkg --csv alerts.csv --tif alerts.tif"}},
}

// printHelp writes a command's help: synopsis, what it does, two
// examples, then its flags.
func printHelp(fs *flag.FlagSet, w io.Writer) {
	name := strings.TrimPrefix(fs.Name(), "canopy ")
	if h, ok := helps[name]; ok {
		fmt.Fprintf(w, "usage: %s\n\n%s\n\nexamples:\n  %s\n  %s\n\nflags:\n", h.synopsis, h.about, h.examples[0], h.examples[1])
	} else {
		fmt.Fprintf(w, "usage: %s [flags]\n\nflags:\n", fs.Name())
	}
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// helpOrUsage turns a flag set's parse error into the command's help
// (flag.ErrHelp, exit 0) or a usage error (exit 2).
func helpOrUsage(fs *flag.FlagSet, err error, stdout io.Writer) error {
	if errors.Is(err, flag.ErrHelp) {
		printHelp(fs, stdout)
		return err
	}
	return request.Error{Msg: err.Error()}
}
