package chart

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"image"
	"image/png"
	"io"
	"slices"
	"strconv"

	"canopy/compute"
	"canopy/compute/outfile"
)

// WritePNG writes img to path as PNG, through a temporary file renamed
// into place, so a failure leaves an existing file untouched.
func WritePNG(path string, img image.Image) error {
	err := outfile.WriteFileBuffered(path, func(w *bufio.Writer) error { return png.Encode(w, img) })
	if err != nil {
		return fmt.Errorf("write chart %s: %w", path, err)
	}
	return nil
}

// CSVHeader is the header row of WriteCSV, one column per field: the
// timings, then the run they come from (WriteRunsCSV's names: "timings",
// "size sweep", "indices per upload"), the index or indices timed and how
// many indices the job computed from one upload.
var CSVHeader = append(slices.Clone(csvTimings), "run", "index", "indices")

// csvTimings are the first columns of CSVHeader: what WriteCSV wrote
// before the run and the indices were added (ReadCSV reads both).
var csvTimings = []string{
	"backend", "mode", "device", "gpu", "width", "height", "pixels", "repeat",
	"setup_ms",
	"upload_median_ms", "upload_min_ms", "upload_max_ms",
	"kernel_median_ms", "kernel_min_ms", "kernel_max_ms",
	"download_median_ms", "download_min_ms", "download_max_ms",
	"total_median_ms", "total_min_ms", "total_max_ms",
	"kernel_gbps", "total_gbps", "ceiling_gbps", "ceiling_kind", "kernel_pct_of_ceiling",
	"h2d_ceiling_gbps", "d2h_ceiling_gbps",
	"verified", "max_abs_err", "nan_mismatch", "error",
}

func ff(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Run is one run's results, named for the CSV's run column.
type Run struct {
	Name    string
	Results []compute.BenchResult
}

// WriteCSV writes results as CSV with CSVHeader: one row per result with
// every phase's median, minimum and maximum in ms, the bandwidths, the
// ceiling and the verification, then the index and the number of indices
// (the run column empty). Numbers are written exactly (shortest
// representation that reads back the same float64).
func WriteCSV(w io.Writer, results []compute.BenchResult) error {
	return WriteRunsCSV(w, []Run{{Results: results}})
}

// WriteRunsCSV is WriteCSV of several runs, each row naming its run.
func WriteRunsCSV(w io.Writer, runs []Run) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("write timings CSV: %w", err)
	}
	for _, run := range runs {
		for _, r := range run.Results {
			rec := []string{
				r.Backend, r.Mode, r.Device, strconv.FormatBool(r.GPU),
				strconv.Itoa(r.Width), strconv.Itoa(r.Height), strconv.Itoa(pixelsOf(r)), strconv.Itoa(r.Repeat),
				ff(r.SetupMS),
				ff(r.Upload.Median), ff(r.Upload.Min), ff(r.Upload.Max),
				ff(r.Kernel.Median), ff(r.Kernel.Min), ff(r.Kernel.Max),
				ff(r.Download.Median), ff(r.Download.Min), ff(r.Download.Max),
				ff(r.Total.Median), ff(r.Total.Min), ff(r.Total.Max),
				ff(r.KernelGBps), ff(r.TotalGBps), ff(r.CeilingGBps), r.CeilingKind, ff(r.KernelPct),
				ff(r.H2DGBps), ff(r.D2HGBps),
				strconv.FormatBool(r.Verified), ff(r.MaxAbsErr), strconv.Itoa(r.NaNMismatch), r.Error,
				run.Name, r.Index, strconv.Itoa(IndexCount(r)),
			}
			if err := cw.Write(rec); err != nil {
				return fmt.Errorf("write timings CSV: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write timings CSV: %w", err)
	}
	return nil
}

// ReadCSV reads results written by WriteCSV. The phase medians are also
// set in UploadMS, KernelMS, DownloadMS and TotalMS.
func ReadCSV(r io.Reader) ([]compute.BenchResult, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read timings CSV header: %w", err)
	}
	want := CSVHeader
	if len(head) == len(csvTimings) {
		want = csvTimings // written before the run and indices columns
	}
	if len(head) != len(want) {
		return nil, fmt.Errorf("read timings CSV: %d columns, want %d", len(head), len(want))
	}
	cr.FieldsPerRecord = len(want)
	for i, h := range want {
		if head[i] != h {
			return nil, fmt.Errorf("read timings CSV: column %d is %q, want %q", i+1, head[i], h)
		}
	}
	var out []compute.BenchResult
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read timings CSV: %w", err)
		}
		p := parser{rec: rec, line: line}
		res := compute.BenchResult{Backend: rec[0], Mode: rec[1], Device: rec[2], GPU: p.bool(3),
			Width: p.int(4), Height: p.int(5), Repeat: p.int(7), SetupMS: p.float(8),
			Upload:     compute.Phase{Median: p.float(9), Min: p.float(10), Max: p.float(11)},
			Kernel:     compute.Phase{Median: p.float(12), Min: p.float(13), Max: p.float(14)},
			Download:   compute.Phase{Median: p.float(15), Min: p.float(16), Max: p.float(17)},
			Total:      compute.Phase{Median: p.float(18), Min: p.float(19), Max: p.float(20)},
			KernelGBps: p.float(21), TotalGBps: p.float(22), CeilingGBps: p.float(23), CeilingKind: rec[24],
			KernelPct: p.float(25), H2DGBps: p.float(26), D2HGBps: p.float(27),
			Verified: p.bool(28), MaxAbsErr: p.float(29), NaNMismatch: p.int(30), Error: rec[31],
		}
		if len(rec) > 33 {
			res.Index = rec[33]
		}
		if p.err != nil {
			return nil, p.err
		}
		if px := p.int(6); p.err == nil && px != pixelsOf(res) {
			return nil, fmt.Errorf("read timings CSV line %d: %d pixels for %dx%d", line, px, res.Width, res.Height)
		}
		res.UploadMS, res.KernelMS, res.DownloadMS, res.TotalMS = res.Upload.Median, res.Kernel.Median, res.Download.Median, res.Total.Median
		out = append(out, res)
	}
}

// parser converts CSV fields, keeping the first error.
type parser struct {
	rec  []string
	line int
	err  error
}

func (p *parser) fail(i int, err error) {
	if p.err == nil {
		p.err = fmt.Errorf("read timings CSV line %d, column %s: %w", p.line, CSVHeader[i], err)
	}
}

func (p *parser) float(i int) float64 {
	v, err := strconv.ParseFloat(p.rec[i], 64)
	if err != nil {
		p.fail(i, err)
	}
	return v
}

func (p *parser) int(i int) int {
	v, err := strconv.Atoi(p.rec[i])
	if err != nil {
		p.fail(i, err)
	}
	return v
}

func (p *parser) bool(i int) bool {
	v, err := strconv.ParseBool(p.rec[i])
	if err != nil {
		p.fail(i, err)
	}
	return v
}
