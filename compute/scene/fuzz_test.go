package scene

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// watch panics when a fuzzed open is still busy after 10 s: a hang is a
// crash to the fuzzer. The returned func stops the watch.
func watch(what string, n int) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			panic(fmt.Sprintf("%s still busy after 10 s on a %d-byte input", what, n))
		}
	}()
	return func() { close(done) }
}

// openFuzzed opens path as a product, loads its red band if it has one,
// and checks what every refusal must be: one line naming the product.
func openFuzzed(t *testing.T, path string, n int) {
	defer watch(path, n)()
	s, err := Open(path)
	if err == nil {
		if s.Bands["red"] != nil {
			_, _, err = s.Load([]string{"red"}, LoadOptions{})
		}
		s.Close()
	}
	if err != nil {
		m := err.Error()
		if strings.ContainsAny(m, "\r\n") {
			t.Fatalf("the error is not one line: %.400q", m)
		}
		if !strings.Contains(m, filepath.Base(path)) && !strings.Contains(m, filepath.Dir(path)) {
			t.Fatalf("the error does not name the product: %.400q", m)
		}
	}
}

const (
	mtlSeed = `GROUP = LANDSAT_METADATA_FILE
  GROUP = PRODUCT_CONTENTS
    LANDSAT_PRODUCT_ID = "LC08_L2SP_044034_20200827_20200906_02_T1"
    PROCESSING_LEVEL = "L2SP"
    FILE_NAME_BAND_4 = "LC08_L2SP_044034_20200827_20200906_02_T1_SR_B4.TIF"
    FILE_NAME_BAND_5 = "../../etc/passwd"
  END_GROUP = PRODUCT_CONTENTS
  GROUP = IMAGE_ATTRIBUTES
    SPACECRAFT_ID = "LANDSAT_8"
    WRS_PATH = 44
    WRS_ROW = 34
    DATE_ACQUIRED = 2020-08-27
    SCENE_CENTER_TIME = "18:47:42.5Z"
    CLOUD_COVER = 3.42
  END_GROUP = IMAGE_ATTRIBUTES
  GROUP = LEVEL2_SURFACE_REFLECTANCE_PARAMETERS
    REFLECTANCE_MULT_BAND_4 = 2.75E-05
    REFLECTANCE_ADD_BAND_4 = -0.2
  END_GROUP = LEVEL2_SURFACE_REFLECTANCE_PARAMETERS
END_GROUP = LANDSAT_METADATA_FILE
END
`
	mtdSeed = `<?xml version="1.0" encoding="UTF-8"?>
<n1:Level-2A_User_Product xmlns:n1="https://psd-14.sentinel2.eo.esa.int/PSD/User_Product_Level-2A.xsd">
<n1:General_Info><Product_Info><PRODUCT_START_TIME>2023-07-14T10:20:59.024Z</PRODUCT_START_TIME>
<PROCESSING_BASELINE>05.09</PROCESSING_BASELINE><PRODUCT_TYPE>S2MSI2A</PRODUCT_TYPE>
<Datatake datatakeIdentifier="x"><SPACECRAFT_NAME>Sentinel-2A</SPACECRAFT_NAME></Datatake>
<Product_Organisation><Granule_List><Granule granuleIdentifier="g" imageFormat="JPEG2000">
<IMAGE_FILE>GRANULE/L2A_T32TQM/IMG_DATA/R10m/T32TQM_B04_10m</IMAGE_FILE>
<IMAGE_FILE>GRANULE/../../../etc/B08_10m</IMAGE_FILE>
</Granule></Granule_List></Product_Organisation></Product_Info>
<Product_Image_Characteristics><QUANTIFICATION_VALUES_LIST><BOA_QUANTIFICATION_VALUE unit="none">10000</BOA_QUANTIFICATION_VALUE></QUANTIFICATION_VALUES_LIST>
<BOA_ADD_OFFSET_VALUES_LIST><BOA_ADD_OFFSET band_id="3">-1000</BOA_ADD_OFFSET></BOA_ADD_OFFSET_VALUES_LIST></Product_Image_Characteristics>
</n1:General_Info></n1:Level-2A_User_Product>
`
	stacSeed = `{"type": "Feature", "id": "S2A_32TQM_20230714_0_L2A", "properties": {"platform": "sentinel-2a", "datetime": "2023-07-14T10:20:59Z", "proj:epsg": 32632, "eo:cloud_cover": 1.5},
 "assets": {"red": {"href": "B04.tif", "type": "image/tiff; application=geotiff", "eo:bands": [{"name": "B04", "common_name": "red"}], "raster:bands": [{"scale": 0.0001, "offset": -0.1, "nodata": 0}]},
 "nir": {"href": "file:///dev/zero", "eo:bands": [{"name": "B08", "common_name": "nir"}], "proj:transform": [10, 0, 600000, 0, -10, 5000000], "proj:shape": [10, 10]},
 "scl": {"href": "https://example.com/SCL.tif"}}}`
)

// FuzzLandsatMTL: an MTL in any of its three forms (the first byte picks
// .txt, .json or .xml) in a product folder beside a band file.
func FuzzLandsatMTL(f *testing.F) {
	f.Add(byte(0), []byte(mtlSeed))
	f.Add(byte(1), []byte(`{"LANDSAT_METADATA_FILE": {"PRODUCT_CONTENTS": {"LANDSAT_PRODUCT_ID": "X", "FILE_NAME_BAND_4": "/etc/passwd"}, "IMAGE_ATTRIBUTES": {"SPACECRAFT_ID": "LANDSAT_9"}}}`))
	f.Add(byte(2), []byte(`<LANDSAT_METADATA_FILE><PRODUCT_CONTENTS><LANDSAT_PRODUCT_ID>X</LANDSAT_PRODUCT_ID></PRODUCT_CONTENTS><IMAGE_ATTRIBUTES><SPACECRAFT_ID>LANDSAT_8</SPACECRAFT_ID></IMAGE_ATTRIBUTES></LANDSAT_METADATA_FILE>`))
	debug.SetMemoryLimit(1 << 30)
	f.Fuzz(func(t *testing.T, form byte, b []byte) {
		dir := filepath.Join(t.TempDir(), "LC08_L2SP_044034_20200827_20200906_02_T1")
		os.Mkdir(dir, 0o755)
		ext := []string{"txt", "json", "xml"}[int(form)%3]
		os.WriteFile(filepath.Join(dir, "LC08_L2SP_044034_20200827_20200906_02_T1_MTL."+ext), b, 0o644)
		os.WriteFile(filepath.Join(dir, "LC08_L2SP_044034_20200827_20200906_02_T1_SR_B4.TIF"), []byte("II*\x00\x08\x00\x00\x00"), 0o644)
		openFuzzed(t, dir, len(b))
	})
}

// FuzzSentinel2MTD: a product's MTD_MSIL2A.xml in a .SAFE folder.
func FuzzSentinel2MTD(f *testing.F) {
	f.Add([]byte(mtdSeed))
	f.Add([]byte(`<a><b>` + strings.Repeat("<c>", 200) + `</b></a>`))
	debug.SetMemoryLimit(1 << 30)
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := filepath.Join(t.TempDir(), "S2A_MSIL2A_20230714T102601_N0509_R065_T32TQM_20230714T163539.SAFE")
		os.Mkdir(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "MTD_MSIL2A.xml"), b, 0o644)
		openFuzzed(t, dir, len(b))
	})
}

// FuzzSTAC: a STAC item whose assets name local files, devices, remote
// URLs.
func FuzzSTAC(f *testing.F) {
	f.Add([]byte(stacSeed))
	f.Add([]byte(`{"type":"Feature","assets":{"red":{"href":"B04.tif"},"red-jp2":{"href":"B04.jp2","proj:shape":[1,1]}}}`))
	debug.SetMemoryLimit(1 << 30)
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "B04.tif"), []byte("II*\x00\x08\x00\x00\x00"), 0o644)
		p := filepath.Join(dir, "item.json")
		os.WriteFile(p, b, 0o644)
		openFuzzed(t, p, len(b))
	})
}

// archiveSeeds are zips and tars of a product's names, a member
// escaping with .., a link.
func zipSeed(names map[string]string, method uint16) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for n, body := range names {
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: n, Method: method})
		fw.Write([]byte(body))
	}
	w.Close()
	return buf.Bytes()
}

func tarSeed(hs ...*tar.Header) []byte {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, h := range hs {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(h.Name))
		}
		w.WriteHeader(h)
		if h.Typeflag == tar.TypeReg {
			w.Write([]byte(h.Name))
		}
	}
	w.Close()
	return buf.Bytes()
}

// FuzzZip: the bytes as a Sentinel-2 .zip: the member walk, the
// metadata read from it and a band inflated.
func FuzzZip(f *testing.F) {
	f.Add(zipSeed(map[string]string{"S2A.SAFE/MTD_MSIL2A.xml": mtdSeed, "S2A.SAFE/GRANULE/L2A_T32TQM/IMG_DATA/R10m/T32TQM_B04_10m.jp2": "\x00\x00\x00\x0cjP  \r\n\x87\n"}, zip.Deflate))
	f.Add(zipSeed(map[string]string{"../evil": "x", "a/MTD_MSIL2A.xml": "<a/>"}, zip.Store))
	debug.SetMemoryLimit(1 << 30)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "S2A_MSIL2A_20230714T102601_N0509_R065_T32TQM_20230714T163539.zip")
		os.WriteFile(p, b, 0o644)
		openFuzzed(t, p, len(b))
	})
}

// FuzzTar: the bytes as a Landsat .tar.
func FuzzTar(f *testing.F) {
	f.Add(tarSeed(&tar.Header{Name: "X_MTL.txt", Typeflag: tar.TypeReg}, &tar.Header{Name: "X_SR_B4.TIF", Typeflag: tar.TypeReg}))
	f.Add(tarSeed(&tar.Header{Name: "../X_MTL.txt", Typeflag: tar.TypeReg}, &tar.Header{Name: "l", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}))
	// A product's MTL and band, as a real tar holds them.
	id := "LC08_L2SP_044034_20200827_20200906_02_T1"
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, m := range []struct{ name, body string }{{id + "_MTL.txt", mtlSeed}, {id + "_SR_B4.TIF", "II*\x00\x08\x00\x00\x00"}} {
		w.WriteHeader(&tar.Header{Name: m.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(m.body))})
		w.Write([]byte(m.body))
	}
	w.Close()
	f.Add(buf.Bytes())
	debug.SetMemoryLimit(1 << 30)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "LC08_L2SP_044034_20200827_20200906_02_T1.tar")
		os.WriteFile(p, b, 0o644)
		openFuzzed(t, p, len(b))
	})
}
