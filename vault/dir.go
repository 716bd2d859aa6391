package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// dirBackend keeps objects as files under a directory. A file is written
// to a hidden temporary name beside its final one, synced, and renamed.
type dirBackend struct{ root string }

func newDirBackend(root string) (*dirBackend, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("vault directory: %w", err)
	}
	return &dirBackend{root: root}, nil
}

func (d *dirBackend) String() string { return d.root }

func (d *dirBackend) path(key string) string { return filepath.Join(d.root, filepath.FromSlash(key)) }

func (d *dirBackend) create(_ context.Context, key string) (pendingObject, error) {
	final := d.path(key)
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// A leading dot hides the temporary file from Hive readers (DuckDB,
	// pyarrow) and from the *.parquet patterns of the docs.
	f, err := os.CreateTemp(dir, "."+path.Base(key)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &dirObject{File: f, final: final}, nil
}

type dirObject struct {
	*os.File
	final string
}

func (o *dirObject) commit(context.Context) error {
	err := o.Sync()
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.Name(), o.final)
	}
	if err != nil {
		_ = os.Remove(o.Name())
		return err
	}
	return syncDir(filepath.Dir(o.final))
}

func (o *dirObject) abort() {
	_ = o.Close()
	_ = os.Remove(o.Name())
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

func (d *dirBackend) open(_ context.Context, key string) (object, int64, error) {
	f, err := os.Open(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, errNotExist
	}
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

func (d *dirBackend) size(_ context.Context, key string) (int64, error) {
	st, err := os.Stat(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, errNotExist
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (d *dirBackend) remove(_ context.Context, key string) error {
	err := os.Remove(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// sweep removes the hidden temporary files (.NAME.tmp-*) that a writer
// killed before its rename left anywhere under the root: they hold no
// object, and on a full disk they hold its space.
func (d *dirBackend) sweep(context.Context) error {
	return filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.Type().IsRegular() && isTempName(e.Name()) {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s left by an interrupted write: %w", p, err)
			}
		}
		return nil
	})
}

// isTempName answers whether name is one create gives a file being written.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}
