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
)

// notifier speaks LISTEN/NOTIFY on channels named after the schema, so that
// several schemas in one database do not wake each other.
type notifier struct {
	pool *pgxpool.Pool

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

func (n *notifier) Listen(ctx context.Context, onInsert func(string), onCancel func(int64)) error {
	insertCh, cancelCh, err := n.channels(ctx)
	if err != nil {
		return err
	}
	conn, err := n.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A LISTEN connection must not go back to the pool still listening.
	defer conn.Release()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, "UNLISTEN *"); err != nil {
			conn.Conn().Close(ctx)
		}
	}()
	for _, ch := range []string{insertCh, cancelCh} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	onInsert("") // what was inserted before this LISTEN woke nobody
	for {
		note, err := conn.Conn().WaitForNotification(ctx)
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
