//go:build ignore

// gen_icon draws Canopy's 512×512 icon: a leaf filled with the NDVI
// red-yellow-green ramp on a dark rounded square, with a midrib and veins.
// Run from assets/: go run gen_icon.go
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

const size = 512

// ramp is the diverging red-yellow-green ramp used for NDVI (ColorBrewer RdYlGn).
var ramp = [][3]float64{
	{165, 0, 38}, {215, 48, 39}, {244, 109, 67}, {253, 174, 97}, {254, 224, 139},
	{217, 239, 139}, {166, 217, 106}, {102, 189, 99}, {26, 152, 80}, {0, 104, 55},
}

func rampAt(t float64) [3]float64 {
	t = math.Max(0, math.Min(1, t)) * float64(len(ramp)-1)
	i := int(t)
	if i >= len(ramp)-1 {
		return ramp[len(ramp)-1]
	}
	f := t - float64(i)
	var c [3]float64
	for k := range c {
		c[k] = ramp[i][k]*(1-f) + ramp[i+1][k]*f
	}
	return c
}

// sample returns the colour and coverage of one sub-pixel sample at (x, y)
// in [0, 1]² coordinates.
func sample(x, y float64) (c [3]float64, a float64) {
	// Rounded square background.
	const r, m = 0.18, 0.03
	dx := math.Max(math.Max(m+r-x, x-(1-m-r)), 0)
	dy := math.Max(math.Max(m+r-y, y-(1-m-r)), 0)
	if dx*dx+dy*dy > r*r {
		return c, 0
	}
	// Background: deep forest gradient, top to bottom.
	bg := [3]float64{18 + 14*y, 46 + 20*y, 38 + 8*y}
	c, a = bg, 1

	// Leaf: lens between two circles, axis from bottom-left to top-right.
	u := ((x - 0.5) + (0.5 - y)) / math.Sqrt2 // along the axis
	v := ((x - 0.5) - (0.5 - y)) / math.Sqrt2 // across
	const half, width = 0.36, 0.19
	R := (half*half + width*width) / (2 * width)
	inLeaf := math.Hypot(u, v+(R-width)) < R && math.Hypot(u, v-(R-width)) < R
	// Stem: a short thick line beyond the base.
	stem := u < -half+0.02 && u > -half-0.12 && math.Abs(v+0.02*(u+half)) < 0.012
	if stem {
		return [3]float64{96, 70, 40}, 1
	}
	if !inLeaf {
		return c, a
	}
	t := (u + half) / (2 * half) // 0 at the base, 1 at the tip
	// Across the blade the colour goes from low NDVI at one edge to high
	// at the other, and rises towards the tip: a small NDVI map on a leaf.
	s := 0.15 + 0.55*t + 0.9*(v/width+1)/2*0.35
	c = rampAt(s)
	// Midrib and veins, lighter.
	vein := math.Abs(v) < 0.007+0.006*(1-t)
	for k := -5; k <= 5; k++ {
		if k == 0 {
			continue
		}
		// Veins leave the midrib at 40° towards the tip.
		p := float64(k) * 0.095
		d := u - p - math.Abs(v)*0.75
		if math.Abs(d) < 0.005 && math.Abs(v) > 0.01 {
			vein = true
		}
	}
	if vein {
		for k := range c {
			c[k] = c[k]*0.55 + 255*0.45
		}
	}
	return c, 1
}

func main() {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const ss = 4
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var acc [3]float64
			var cov float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x := (float64(px) + (float64(sx)+0.5)/ss) / size
					y := (float64(py) + (float64(sy)+0.5)/ss) / size
					c, a := sample(x, y)
					for k := range acc {
						acc[k] += c[k] * a
					}
					cov += a
				}
			}
			if cov == 0 {
				continue
			}
			img.SetNRGBA(px, py, color.NRGBA{
				R: uint8(acc[0]/cov + 0.5), G: uint8(acc[1]/cov + 0.5), B: uint8(acc[2]/cov + 0.5),
				A: uint8(255*cov/(ss*ss) + 0.5),
			})
		}
	}
	f, err := os.Create("icon.png")
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
