package season_test

import (
	"math"
	"testing"
	"time"

	"canopy/compute"
	_ "canopy/compute/goback"
	"canopy/compute/season"
	"canopy/compute/season/seasontest"
)

func TestGo(t *testing.T) {
	for _, name := range []string{compute.NameGo, compute.NameGoParallel} {
		b, err := compute.New(name)
		if err != nil {
			t.Fatal(err)
		}
		seasontest.Run(t, b)
		b.Close()
	}
}

func TestCritval(t *testing.T) {
	// strucchange's own numbers: monitorMECritvalTable["0.25", "10", "0.95", "max"]
	// and an interpolated level.
	c, err := season.Critval(0.25, 10, 0.05)
	if err != nil || c != 1.341825 && math.Abs(c-1.341825) > 1e-6 {
		t.Errorf("Critval(0.25, 10, 0.05) = %v, %v", c, err)
	}
	if _, err := season.Critval(0.3, 10, 0.05); err == nil {
		t.Error("h = 0.3 was taken")
	}
	if _, err := season.Critval(0.25, 10, 0.1); err == nil {
		t.Error("level 0.1 was taken")
	}
}

func TestDecimalYear(t *testing.T) {
	d := season.DecimalYear(time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC))
	if want := 2024 + 182.0/366; math.Abs(d-want) > 1e-12 {
		t.Errorf("2024-07-01 is %v, want %v", d, want)
	}
	for _, s := range []string{"2018-01-01", "2020-02-29", "2023-12-31", "2024-06-15"} {
		tm, _ := time.Parse("2006-01-02", s)
		if got := season.ISODate(season.DecimalYear(tm)); got != s {
			t.Errorf("%s comes back as %s", s, got)
		}
	}
}
