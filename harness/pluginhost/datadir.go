package pluginhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// DataDir returns, creating it when missing (mode 0700), a plugin's data
// folder for this project: <root>/<name>/. The folder is made beneath root
// (os.Root), and a symlink or a file in its place is refused, so a
// repository cannot point a plugin's writes elsewhere. root "" means no
// data folder ("" returned).
func DataDir(root, name string) (string, error) {
	return DataDirBeneath("", root, name)
}

// DataDirBeneath is DataDir with root itself created beneath anchor (when
// anchor is not ""): a symlink on the way from anchor to root that leads
// out of anchor is refused instead of followed.
func DataDirBeneath(anchor, root, name string) (string, error) {
	if root == "" {
		return "", nil
	}
	if !pluginNameRE().MatchString(name) {
		return "", fmt.Errorf("plugin data folder: %q is not a plugin name", name)
	}
	if err := mkdirBeneath(anchor, root); err != nil {
		return "", fmt.Errorf("plugin data folder: %w", err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", fmt.Errorf("plugin data folder: %w", err)
	}
	defer r.Close()
	if err := r.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("plugin data folder: %w", err)
	}
	st, err := r.Lstat(name)
	if err != nil {
		return "", fmt.Errorf("plugin data folder: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("plugin data folder %s is not a folder (%s); remove it", filepath.Join(root, name), st.Mode().Type())
	}
	return filepath.Join(root, name), nil
}

// mkdirBeneath creates dir (mode 0700), beneath anchor through os.Root
// when anchor is set.
func mkdirBeneath(anchor, dir string) error {
	if anchor == "" {
		return os.MkdirAll(dir, 0o700)
	}
	rel, err := filepath.Rel(anchor, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s is not inside %s", dir, anchor)
	}
	r, err := os.OpenRoot(anchor)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.MkdirAll(filepath.ToSlash(rel), 0o700); err != nil {
		return fmt.Errorf("create %s beneath %s (a symlink on the way that leads out of it is refused; see docs/security.md): %w", dir, anchor, err)
	}
	return nil
}
