// Package assets holds Canopy's embedded resources: the application icon
// (icon.png, 512×512, drawn by gen_icon.go).
package assets

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

//go:generate go run gen_icon.go

//go:embed icon.png
var iconPNG []byte

// Icon is the application and window icon.
var Icon = fyne.NewStaticResource("icon.png", iconPNG)
