package pgdriver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver"
)

// notifier speaks LISTEN/NOTIFY on channels named after the schema, so that
// several schemas in one database do not wake each other.
type notifier struct {
	pool *pgxpool.Pool
	// listen is the connection LISTEN opens for itself (the listen
	// database URL); nil: it borrows one of the pool's.
	listen *pgx.ConnConfig
	// noListen: the pool is behind a pooler in transaction mode and there
	// is no listen URL; Listen answers driver.ErrNoListen.
	noListen bool

	mu               sync.Mutex
	insertCh, cancel string
}

func (n *notifier) channels(ctx context.Context) (insert, cancel string, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.insertCh == "" {
		var schema string
		if err := n.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return "", "", fmt.Errorf("read current schema: %w", err)
		}
		if len(schema) > 40 {
			schema = schema[:40]
		}
		n.insertCh, n.cancel = "skiplock_insert_"+schema, "skiplock_cancel_"+schema
	}
	return n.insertCh, n.cancel, nil
}

func (n *notifier) NotifyCancel(ctx context.Context, id int64) error {
	_, ch, err := n.channels(ctx)
	if err != nil {
		return err
	}
	_, err = n.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, ch, strconv.FormatInt(id, 10))
	return err
}

// listenConn answers the connection to LISTEN on and what gives it back:
// a connection of its own on the listen URL, closed after, or one of the
// pool's, which must not go back to the pool still listening.
func (n *notifier) listenConn(ctx context.Context) (*pgx.Conn, func(), error) {
	if n.noListen {
		return nil, nil, fmt.Errorf("the database URL goes through a pooler in transaction mode (%s=transaction) "+
			"and no listen database URL is set: %w", PoolModeParam, driver.ErrNoListen)
	}
	if n.listen != nil {
		conn, err := pgx.ConnectConfig(ctx, n.listen)
		if err != nil {
			return nil, nil, fmt.Errorf("connect to the listen database url: %w", err)
		}
		return conn, func() { conn.Close(context.Background()) }, nil
	}
	pc, err := n.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	return pc.Conn(), func() {
		defer pc.Release()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := pc.Exec(ctx, "UNLISTEN *"); err != nil {
			pc.Conn().Close(ctx)
		}
	}, nil
}

func (n *notifier) Listen(ctx context.Context, onInsert func(string), onCancel func(int64)) error {
	insertCh, cancelCh, err := n.channels(ctx)
	if err != nil {
		return err
	}
	conn, done, err := n.listenConn(ctx)
	if err != nil {
		return err
	}
	defer done()
	for _, ch := range []string{insertCh, cancelCh} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	onInsert("") // what was inserted before this LISTEN woke nobody
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch note.Channel {
		case insertCh:
			for _, q := range strings.Split(note.Payload, ",") {
				onInsert(q)
			}
		case cancelCh:
			if id, err := strconv.ParseInt(note.Payload, 10, 64); err == nil {
				onCancel(id)
			}
		}
	}
}
