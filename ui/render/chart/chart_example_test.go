package chart_test

import (
	"fmt"
	"math"
	"os"

	"canopy/compute"
	"canopy/ui/render/chart"
)

// Crossover finds the image size from which the GPU, transfers included,
// beats the fastest CPU backend.
func ExampleCrossover() {
	// Power laws, so that the crossing is known without the code: the CPU
	// takes 1e-6 ms per pixel, the GPU with transfers 1e-3·√pixels ms;
	// they meet where √pixels = 1000, at exactly 1 000 000 pixels. The
	// GPU's kernel alone (1e-5·pixels^0.75 ms) meets the CPU at 10 000
	// pixels, below the smallest size measured, so it wins from there.
	var results []compute.BenchResult
	for _, side := range []int{256, 1024, 4096} {
		px := float64(side * side)
		results = append(results,
			compute.BenchResult{Backend: "c", Width: side, Height: side, KernelMS: 1e-6 * px, TotalMS: 1e-6 * px, Verified: true},
			compute.BenchResult{Backend: "cuda", GPU: true, Width: side, Height: side,
				KernelMS: 1e-5 * math.Pow(px, 0.75), TotalMS: 1e-3 * math.Sqrt(px), Verified: true})
	}
	kernel, _ := chart.Crossover(results, "cuda", false)
	px, ok := chart.Crossover(results, "cuda", true)
	fmt.Println("kernel only, the GPU wins from", kernel, "pixels (256²)")
	fmt.Println("with transfers, from", px, "pixels:", ok)
	// Output:
	// kernel only, the GPU wins from 65536 pixels (256²)
	// with transfers, from 1000000 pixels: true
}

// WriteCSV puts every phase's median, minimum and maximum in a table.
func ExampleWriteCSV() {
	r := compute.BenchResult{Backend: "go-parallel", Device: "host", Width: 1000, Height: 1000, Repeat: 5,
		KernelMS: 1.5, TotalMS: 1.5, Kernel: compute.Phase{Median: 1.5, Min: 1.4, Max: 1.9},
		Total: compute.Phase{Median: 1.5, Min: 1.4, Max: 1.9}, KernelGBps: 8, TotalGBps: 8,
		CeilingGBps: 16, CeilingKind: "host-copy", KernelPct: 50, Verified: true}
	if err := chart.WriteCSV(os.Stdout, []compute.BenchResult{r}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// backend,mode,device,gpu,width,height,pixels,repeat,setup_ms,upload_median_ms,upload_min_ms,upload_max_ms,kernel_median_ms,kernel_min_ms,kernel_max_ms,download_median_ms,download_min_ms,download_max_ms,total_median_ms,total_min_ms,total_max_ms,kernel_gbps,total_gbps,ceiling_gbps,ceiling_kind,kernel_pct_of_ceiling,h2d_ceiling_gbps,d2h_ceiling_gbps,verified,max_abs_err,nan_mismatch,error,run,index,indices
	// go-parallel,,host,false,1000,1000,1000000,5,0,0,0,0,1.5,1.4,1.9,0,0,0,1.5,1.4,1.9,8,8,16,host-copy,50,0,0,true,0,0,,,,1
}
