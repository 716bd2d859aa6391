package skiplock_test

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
)

func pgdriverNew(pool *pgxpool.Pool) driver.Driver { return pgdriver.New(pool) }
