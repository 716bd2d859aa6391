package pgdriver

import (
	"context"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver"
)

func (e executor) QueuePause(ctx context.Context, name string) error {
	_, err := e.q.Exec(ctx, queuePause.SQL, queuePause.Args(queuePauseArgs{name, true})...)
	return err
}

func (e executor) QueueResume(ctx context.Context, name string) error {
	_, err := e.q.Exec(ctx, queuePause.SQL, queuePause.Args(queuePauseArgs{name, false})...)
	return err
}

func (e executor) QueueExists(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := e.q.QueryRow(ctx, queueExists.SQL, queueExists.Args(nameArg{name})...).Scan(&ok)
	return ok, err
}

// QueueNotify notifies in the caller's transaction, or alone: then it
// commits without waiting for the disk (a wake-up lost in a crash costs a
// poll, not a job), so that it holds NOTIFY's lock, which every notifying
// commit of the database takes in turn, only for its commit's WAL record.
func (e executor) QueueNotify(ctx context.Context, queues []string) error {
	ch, _, err := e.n.channels(ctx)
	if err != nil {
		return err
	}
	stmt := notify
	if _, alone := e.q.(*pgxpool.Pool); alone {
		stmt = notifyAlone
	}
	_, err = e.q.Exec(ctx, stmt.SQL, stmt.Args(notifyArgs{ch, queues})...)
	return err
}

// QueueList sends its statements as one pipeline: one round trip, not one
// a statement.
func (e executor) QueueList(ctx context.Context, withArchive bool) ([]driver.QueueInfo, error) {
	byName := map[string]*driver.QueueInfo{}
	get := func(name string) *driver.QueueInfo {
		if byName[name] == nil {
			byName[name] = &driver.QueueInfo{Name: name, Counts: map[driver.JobState]int64{}}
		}
		return byName[name]
	}
	b := &pgx.Batch{}
	b.Queue(q("QueueSettings")).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var name string
			var paused bool
			if err := rows.Scan(&name, &paused); err != nil {
				return err
			}
			get(name).Paused = paused
		}
		return rows.Err()
	})
	stmts := []string{"QueueCountsLive"}
	if withArchive {
		stmts = append(stmts, "QueueCountsArchive")
	} else {
		since := time.Now().Add(-driver.QueueRecentWindow)
		b.Queue(queueNamesRecent.SQL, queueNamesRecent.Args(sinceArg{since})...).Query(func(rows pgx.Rows) error {
			names, err := collectStrings(rows, nil)
			for _, name := range names {
				get(name)
			}
			return err
		})
	}
	for _, stmt := range stmts {
		b.Queue(q(stmt)).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var name, state string
				var n int64
				var age float64
				if err := rows.Scan(&name, &state, &n, &age); err != nil {
					return err
				}
				qi := get(name)
				qi.Counts[driver.JobState(state)] += n
				if age := fromSecs(age); state == string(driver.StatePending) && age > 0 {
					qi.OldestPendingAge = age
				}
			}
			return rows.Err()
		})
	}
	if err := e.q.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	out := make([]driver.QueueInfo, 0, len(byName))
	for _, qi := range byName {
		out = append(out, *qi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (e executor) LeaderAttempt(ctx context.Context, name, id string, ttl time.Duration) (bool, error) {
	rows, err := e.q.Query(ctx, leaderAttempt.SQL, leaderAttempt.Args(leaderArgs{name, id, secs(ttl)})...)
	if err != nil {
		return false, err
	}
	leaders, err := collectStrings(rows, nil)
	return len(leaders) == 1 && leaders[0] == id, err
}

func (e executor) LeaderResign(ctx context.Context, name, id string) error {
	_, err := e.q.Exec(ctx, leaderResign.SQL, leaderResign.Args(resignArgs{name, id})...)
	return err
}

var (
	queuePause    = bind[queuePauseArgs]("QueuePause")
	queueExists   = bind[nameArg]("QueueExists")
	notify        = bind[notifyArgs]("Notify")
	notifyAlone   = bind[notifyArgs]("NotifyAlone")
	leaderAttempt = bind[leaderArgs]("LeaderAttempt")
	leaderResign  = bind[resignArgs]("LeaderResign")
)

type nameArg struct {
	Name string `sql:"name"`
}

type queuePauseArgs struct {
	Name   string `sql:"name"`
	Paused bool   `sql:"paused"`
}

type notifyArgs struct {
	Channel  string   `sql:"channel"`
	Payloads []string `sql:"payloads"`
}

type resignArgs struct {
	Name     string `sql:"name"`
	LeaderID string `sql:"leader_id"`
}

type leaderArgs struct {
	Name     string  `sql:"name"`
	LeaderID string  `sql:"leader_id"`
	TTL      float64 `sql:"ttl"`
}

var (
	queueNamesRecent    = bind[sinceArg]("QueueNamesArchiveRecent")
	queueRecordArchived = bind[sinceArg]("QueueRecordArchived")
)

type sinceArg struct {
	Since time.Time `sql:"since"`
}

func (e executor) QueueRecordArchived(ctx context.Context, since time.Time) error {
	_, err := e.q.Exec(ctx, queueRecordArchived.SQL, queueRecordArchived.Args(sinceArg{since})...)
	return err
}
