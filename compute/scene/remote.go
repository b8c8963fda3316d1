package scene

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
	"sync"

	"canopy/compute/remote"
	"canopy/compute/stac"
)

// Products and files named by URL (http, https, s3://): a STAC item's
// JSON and its assets, or a Cloud Optimized GeoTIFF, read by byte ranges
// over the network (compute/remote: the header in one request, a window's
// tiles merged, retries, the disk cache in the user's cache folder).
// Planetary Computer assets (Azure Blob Storage) are signed with its SAS
// tokens (stac.PCSigner), one token per container reused until it expires.

// remoteClient is the one client of every remote file the process reads,
// so that their requests share one bound and one cache.
var remoteClient = sync.OnceValue(func() *remote.Client {
	return remote.New(remote.Options{Cache: remote.DefaultCache()})
})

// pcSigner signs Planetary Computer links for every scene.
var pcSigner = &stac.PCSigner{}

// signerFor is the Signer a URL's host needs, nil for none.
func signerFor(u string) remote.Signer {
	p, err := url.Parse(u)
	if err == nil && strings.HasSuffix(strings.ToLower(p.Hostname()), ".blob.core.windows.net") {
		return pcSigner
	}
	return nil
}

// openRemote opens a product named by URL: a GeoTIFF (.tif, .tiff) as an
// orthomosaic or multi-band file, anything else as a STAC item. ctx bounds
// every request of the scene's files, later reads included.
func openRemote(ctx context.Context, u string) (*Scene, error) {
	hu, err := remote.HTTPURL(u)
	if err != nil {
		return nil, err
	}
	p, _ := url.Parse(hu)
	switch strings.ToLower(path.Ext(p.Path)) {
	case ".tif", ".tiff":
		return openOrtho(ctx, u)
	}
	s, err := openSTAC(ctx, u)
	if err != nil {
		return nil, err
	}
	return s, s.finish()
}

// remoteFiles keeps the remote files a scene opened, once each; ctx (nil:
// none) bounds their requests.
type remoteFiles struct {
	ctx   context.Context
	mu    sync.Mutex
	files map[string]*remote.File
}

func (r *remoteFiles) open(u string) (io.ReaderAt, int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f := r.files[u]; f != nil {
		return f, f.Size(), nil
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	f, err := remoteClient().Open(ctx, u, signerFor(u))
	if err != nil {
		return nil, 0, err
	}
	if r.files == nil {
		r.files = map[string]*remote.File{}
	}
	r.files[u] = f
	return f, f.Size(), nil
}

func (r *remoteFiles) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.files {
		f.Close()
	}
	r.files = nil
}

// assetHref is where an asset's file is: a URL as it is (s3:// of public
// buckets as HTTPS), an href relative to a remote item resolved against
// the item's URL; "" and false for a local href.
func assetHref(item, href string) (string, bool, error) {
	if remote.IsURL(href) {
		return href, true, nil
	}
	if !remote.IsURL(item) || strings.HasPrefix(href, "file://") {
		return "", false, nil
	}
	base, err := url.Parse(item)
	if err != nil {
		return "", false, err
	}
	ref, err := url.Parse(href)
	if err != nil {
		return "", false, fmt.Errorf("href %q: %v", href, err)
	}
	return base.ResolveReference(ref).String(), true, nil
}
