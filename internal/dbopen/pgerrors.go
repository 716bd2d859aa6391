package dbopen

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgConnectError turns a failed connection that a wrong URL explains (no
// such database, an unknown role, a refused password, nothing listening
// at the address, a host name that does not resolve) into one line naming
// what is wrong, marked ErrBadDatabase; other failures (a timeout, a
// server shutting down) stay as they are.
func pgConnectError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "3D000": // invalid_catalog_name
			return badDatabase{fmt.Errorf("database url: %s (create it, or fix the database name)", pe.Message)}
		case "28000", "28P01": // invalid_authorization_specification, invalid_password
			return badDatabase{fmt.Errorf("database url: %s (fix the user or password)", pe.Message)}
		}
		return err
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return badDatabase{fmt.Errorf("database url: no such host %q", dns.Name)}
	}
	var op *net.OpError
	if errors.As(err, &op) && errors.Is(err, syscall.ECONNREFUSED) {
		addr := "the address"
		if op.Addr != nil {
			addr = op.Addr.String()
		}
		return badDatabase{fmt.Errorf("database url: connection refused at %s (is PostgreSQL running there? fix the host or port)", addr)}
	}
	return err
}
