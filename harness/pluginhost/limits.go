package pluginhost

// Limits on what nexus reads from a plugin's folder, a plugins folder and
// its own digest cache (docs/security.md lists them). A plugin folder can
// come with a cloned repository (.nexus/plugins/): each file is read only
// when it is a regular file, without blocking (internal/safefile).
const (
	// maxManifestSize bounds what is read from a manifest: they are a few
	// hundred bytes, and a hook process reads every one.
	maxManifestSize = 64 << 10
	// MaxExecutableBytes bounds the executable nexus hashes before each
	// start (the bundled plugin host is about 20 MB).
	MaxExecutableBytes = 512 << 20
	// maxPluginFolders bounds a plugins folder's listing.
	maxPluginFolders = 1000
	// maxDigestFile bounds the digest cache file (256 entries of about
	// 200 bytes).
	maxDigestFile = 1 << 20
)
