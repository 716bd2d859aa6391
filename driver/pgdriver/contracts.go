package pgdriver

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// ContractsPut stores the next version of the contract set.
func (e executor) ContractsPut(ctx context.Context, c *driver.StoredContracts) (*driver.StoredContracts, error) {
	return scanContracts(e.q.QueryRow(ctx, contractsPut.SQL, contractsPut.Args(contractsArgs{string(c.Source), c.Digest, c.Strict,
		[]byte(c.Kinds), []byte(c.Defaults)})...))
}

// ContractsCurrent answers the newest version of the contract set.
func (e executor) ContractsCurrent(ctx context.Context) (*driver.StoredContracts, error) {
	return scanContracts(e.q.QueryRow(ctx, q("ContractsCurrent")))
}

func scanContracts(row pgx.Row) (*driver.StoredContracts, error) {
	var c driver.StoredContracts
	var source string
	var kinds []byte
	err := row.Scan(&c.Version, &source, &c.Digest, &c.Strict, &kinds, scanTime(&c.AppliedAt))
	if err == pgx.ErrNoRows {
		return nil, driver.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	c.Source, c.Kinds = []byte(source), kinds
	return &c, nil
}

var contractsPut = bind[contractsArgs]("ContractsPut")

type contractsArgs struct {
	Source   string `sql:"source"`
	Digest   string `sql:"digest"`
	Strict   bool   `sql:"strict"`
	Kinds    []byte `sql:"kinds"`
	Defaults []byte `sql:"defaults"`
}
