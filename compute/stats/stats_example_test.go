package stats_test

import (
	"fmt"
	"math"

	"canopy/compute/stats"
)

func ExampleSummarize() {
	ndvi := []float32{0.2, 0.4, float32(math.NaN()), 0.6}
	s := stats.Summarize(ndvi)
	fmt.Printf("mean %.2f, std %.3f, %d of %d valid\n", s.Mean, s.Std, s.Valid, s.Total)
	// Output:
	// mean 0.40, std 0.163, 3 of 4 valid
}

func ExampleClasses() {
	ndvi := []float32{-0.2, 0.1, 0.3, 0.5, 0.7, 0.8, float32(math.NaN())}
	// 10 m pixels: 100 m² each.
	for _, c := range stats.Classes(ndvi, 100) {
		fmt.Printf("%-12s %d px %4.1f%% %.2f ha\n", c.Class.Name, c.Pixels, 100*c.Share, c.Hectares)
	}
	// Output:
	// no vegetation 1 px 16.7% 0.01 ha
	// bare         1 px 16.7% 0.01 ha
	// sparse       1 px 16.7% 0.01 ha
	// moderate     1 px 16.7% 0.01 ha
	// dense        2 px 33.3% 0.02 ha
}

func ExampleHistogram() {
	ndvi := []float32{-0.9, -0.1, 0.1, 0.3, 0.35, 0.9}
	fmt.Println(stats.Histogram(ndvi, 4, -1, 1), stats.Edges(4, -1, 1))
	// Output:
	// [1 1 3 1] [-1 -0.5 0 0.5 1]
}
