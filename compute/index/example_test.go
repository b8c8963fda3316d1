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
	// column 22: unknown role "rde" (roles: blue, green, red, rededge1, rededge2, rededge3, nir, nir2, swir1, swir2)
}
