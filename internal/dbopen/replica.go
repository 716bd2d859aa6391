package dbopen

import (
	"context"
	"fmt"
	"strings"

	"github.com/skiplock/skiplock/driver/pgdriver"
)

// CheckReadURL answers an error naming what is wrong when a database at
// url cannot read from a replica at readURL: only PostgreSQL replicates.
func CheckReadURL(url, readURL string) error {
	if readURL == "" {
		return nil
	}
	if kind, err := Kind(readURL); err != nil || kind != "postgres" {
		return fmt.Errorf("read database url %q: want postgres://… (a streaming replica of the database)", readURL)
	}
	if kind, _ := Kind(url); kind != "postgres" {
		return fmt.Errorf("read database url: the database %q is SQLite, which has no replica; it needs a postgres:// database url", url)
	}
	return nil
}

// ReadFrom makes o's driver read lists, counts and export pages from the
// streaming replica at readURL ("" reads none); o.Close closes it too.
func (o Opened) ReadFrom(ctx context.Context, readURL string) error {
	if readURL == "" {
		return nil
	}
	d, ok := o.Driver.(*pgdriver.Driver)
	if !ok {
		return badDatabase{fmt.Errorf("read database url: the %s driver reads no replica", o.Driver.Name())}
	}
	r, err := pgdriver.Connect(ctx, readURL)
	if err != nil {
		return readURLError(pgConnectError(err))
	}
	d.ReadFrom(r.Pool())
	return nil
}

// readURLError says that err is the read database url's.
func readURLError(err error) error {
	if strings.HasPrefix(err.Error(), "database url") {
		return fmt.Errorf("read %w", err)
	}
	return fmt.Errorf("read database url: %w", err)
}
