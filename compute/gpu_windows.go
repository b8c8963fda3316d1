package compute

import (
	"sort"
	"strings"

	winreg "golang.org/x/sys/windows/registry"
)

// displayClass is the registry key of Windows' display adapters (the
// "Display" device class), one numbered subkey an adapter.
const displayClass = `SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}`

// displayAdapter is what the registry says of one display adapter.
type displayAdapter struct{ desc, provider, version string }

// displayAdapters lists the display adapters' names, driver providers and
// driver versions; none when the key cannot be read.
func displayAdapters() []displayAdapter {
	k, err := winreg.OpenKey(winreg.LOCAL_MACHINE, displayClass, winreg.ENUMERATE_SUB_KEYS)
	if err != nil {
		return nil
	}
	defer k.Close()
	names, _ := k.ReadSubKeyNames(-1)
	sort.Strings(names)
	var out []displayAdapter
	for _, n := range names {
		if len(n) != 4 || strings.Trim(n, "0123456789") != "" {
			continue // "Properties" and the like
		}
		a, err := winreg.OpenKey(k, n, winreg.QUERY_VALUE)
		if err != nil {
			continue // some are the system's alone
		}
		var d displayAdapter
		d.desc, _, _ = a.GetStringValue("DriverDesc")
		d.provider, _, _ = a.GetStringValue("ProviderName")
		d.version, _, _ = a.GetStringValue("DriverVersion")
		a.Close()
		if d.desc != "" {
			out = append(out, d)
		}
	}
	return out
}

// nvidiaPresent reports whether a display adapter's driver is NVIDIA's.
func nvidiaPresent() bool {
	for _, a := range displayAdapters() {
		if strings.Contains(strings.ToUpper(a.provider+" "+a.desc), "NVIDIA") {
			return true
		}
	}
	return false
}

// gpuDriverKey is every display adapter's name and driver version ("NVIDIA
// GeForce GTX 1660 SUPER 31.0.15.5222"), "" when the registry lists none.
func gpuDriverKey() string {
	var parts []string
	for _, a := range displayAdapters() {
		parts = append(parts, strings.TrimSpace(a.desc+" "+a.version))
	}
	return strings.Join(parts, " | ")
}
