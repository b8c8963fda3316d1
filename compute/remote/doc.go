// Package remote reads files over HTTP(S) by byte ranges, so that a Cloud
// Optimized GeoTIFF in an archive (Earth Search, Microsoft's Planetary
// Computer, any web server that answers Range requests) is read as the
// field's tools read it: the header in one GET of 32 KiB (more only when
// the image directories are larger), then only the strips or tiles a
// window needs, neighbouring ones merged into one request, several
// requests at once within a bound, over HTTP/2 where the server offers it.
//
// A File is an io.ReaderAt of known size that compute/geotiff reads like
// a local file (geotiff.NewReader); it implements geotiff.Prefetcher, so a
// window read tells it every tile range first and it fetches them
// together. Bytes come from memory (the header, the current window), then
// from the on-disk cache, then from the server.
//
// Every response is checked: the status, Content-Range against the range
// asked for and the file's size, Content-Length, the body's length (a
// short body is retried, a longer one refused), and the file's validator
// (ETag, else Last-Modified), which must stay the same for the life of
// the File: a file that changes on the server while it is read is an
// error, never a mix of old and new bytes. 429 and 5xx answers, and
// broken connections, are retried with exponential backoff, honouring
// Retry-After, a bounded number of times. A server that is not there
// (no such host; a refused connection at a file's first request) is not
// retried: the cache answers at once; a refused request once the file is
// open is retried (a server restarting). A transfer that stalls (no
// byte for Options.IdleTimeout) or drips (less than Options.MinRate over
// that time) is abandoned and retried. Redirects may go to http and https
// only, and never from one host to another host's private, loopback or
// link-local address. Response headers are bounded in size and time.
//
// The cache (Cache) keeps fetched ranges in the user's cache folder
// (os.UserCacheDir()/canopy/remote, or $CANOPY_CACHE_DIR/remote; "off"
// keeps none), keyed by the URL without its query (so that re-signed
// Planetary Computer links share it) and by the validator, within a size
// limit (least recently used files go first). Files are written to a
// temporary name and renamed into place (compute/outfile), so a reader sees whole ranges or
// none; a server file without a validator is never cached. When the server
// cannot be reached (no connection, no such host), a file the cache holds
// opens from it alone, the version cached last (File.Offline).
//
// Hrefs: s3:// URLs of public buckets are mapped to their HTTPS endpoints
// (HTTPURL); a Signer (compute/stac's Planetary Computer signer) may sign
// each request's URL, and is asked again when a signed URL is refused.
package remote
