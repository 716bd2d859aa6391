package vault

import (
	"context"
	"errors"
	"io"
)

// errNotExist is a backend's answer for a key it does not hold.
var errNotExist = errors.New("no such object")

// backend is where a vault's objects live: a directory or an S3 bucket.
// Keys are slash-separated paths relative to the vault's root.
type backend interface {
	// create answers a writer whose content appears under key, whole, only
	// when it is committed.
	create(ctx context.Context, key string) (pendingObject, error)
	// open answers a reader of key and its size, errNotExist when absent.
	open(ctx context.Context, key string) (object, int64, error)
	// size answers the size of key, errNotExist when absent.
	size(ctx context.Context, key string) (int64, error)
	// remove deletes key; an absent key is no error.
	remove(ctx context.Context, key string) error
	// sweep removes what a writer killed mid-object left (a directory's
	// hidden temporary files); it runs when the vault opens.
	sweep(ctx context.Context) error
	// String names the vault for people (a path or an s3:// URL).
	String() string
}

// object is a stored object being read.
type object interface {
	io.ReaderAt
	io.Reader
	io.Closer
}

// pendingObject is an object being written: nothing is visible under its
// key until commit returns; abort throws it away.
type pendingObject interface {
	io.Writer
	commit(ctx context.Context) error
	abort()
}
