package sqlitedriver

import (
	"context"
	"database/sql"

	"github.com/skiplock/skiplock/driver"
)

// ContractsPut stores the next version of the contract set.
func (e executor) ContractsPut(ctx context.Context, c *driver.StoredContracts) (*driver.StoredContracts, error) {
	_, now, _ := nowArgs()
	return scanContracts(e.wquery(ctx, "ContractsPut", sql.Named("source", string(c.Source)),
		sql.Named("digest", c.Digest), sql.Named("strict", c.Strict), sql.Named("kinds", string(c.Kinds)), now))
}

// ContractsCurrent answers the newest version of the contract set.
func (e executor) ContractsCurrent(ctx context.Context) (*driver.StoredContracts, error) {
	return scanContracts(e.rquery(ctx, "ContractsCurrent"))
}

func scanContracts(rows *sql.Rows, err error) (*driver.StoredContracts, error) {
	all, err := collect(func(s scanner) (*driver.StoredContracts, error) {
		var c driver.StoredContracts
		var source, kinds string
		var at int64
		err := s.Scan(&c.Version, &source, &c.Digest, &c.Strict, &kinds, &at)
		c.Source, c.Kinds, c.AppliedAt = []byte(source), []byte(kinds), fromMicros(at)
		return &c, err
	})(rows, err)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, driver.ErrNotFound
	}
	return all[0], nil
}
