package index_test

import (
	"fmt"

	"canopy/compute/index"
)

func ExampleParse() {
	e, err := index.Parse("2.5*(NIR-red)/(nir + 6*red - 7.5*blue + 1)")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e)
	fmt.Println(e.Roles())
	v := [index.NumRoles]float64{}
	v[index.RoleIndex("blue")] = 0.02
	v[index.RoleIndex("red")] = 0.03
	v[index.RoleIndex("nir")] = 0.35
	fmt.Printf("%.4f\n", e.Eval64(&v))

	_, err = index.Parse("(nir - red) / (nir + rde)")
	fmt.Println(err)
	// Output:
	// 2.5 * (nir - red) / (nir + 6 * red - 7.5 * blue + 1)
	// [blue red nir]
	// 0.5797
	// column 22: unknown role "rde": did you mean "red"? (roles: blue, green, red, rededge1, rededge2, rededge3, nir, nir2, swir1, swir2)
}

func ExampleCompile() {
	ndvi, _ := index.Lookup("ndvi")
	savi, _ := index.Lookup("savi")
	p, err := index.Compile([]*index.Expr{ndvi.Expr, savi.Expr})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(p)

	// One pixel: red 0.05, nir 0.45 (inputs in p.Inputs order), in float32:
	// ndvi 0.8 and savi 0.6 within float32 rounding.
	out := make([]float32, len(p.Outputs))
	p.Eval32([]float32{0.05, 0.45}, make([]float32, p.NumRegs), out)
	fmt.Println(out)
	// Output:
	// inputs: in0=red in1=nir
	// registers: 3
	// r0 = load in1 (nir)
	// r1 = load in0 (red)
	// r2 = sub r0 r1
	// r0 = add r0 r1
	// r1 = div r2 r0
	// r1 = finite r1
	// r2 = mulk r2 1.5
	// r0 = addk r0 0.5
	// r0 = div r2 r0
	// r0 = finite r0
	// outputs: out0=r1 out1=r0
	// [0.79999995 0.59999996]
}
