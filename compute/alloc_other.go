//go:build !linux

package compute

func adviseHuge(p []float32) {}
