package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/skiplock/skiplock"
)

// parseSpec reads a job spec by the library's one input step; errors name
// the field under prefix. A scoped token enqueues for its tenant only.
func (s *Server) parseSpec(raw []byte, prefix string, p *principal) (skiplock.InsertManyParams, error) {
	job, err := skiplock.ParseJobSpec(raw, prefix, s.cfg.MaxPayloadBytes)
	if err != nil {
		return job, err
	}
	if p != nil && p.scoped {
		job.Opts.Tenant = p.tenant
	}
	return job, nil
}

// missingParent names, when err is a parent that does not exist, the field
// of the first job spec whose depends_on names it (as checkParents does):
// "depends_on[1]", "jobs[3].depends_on[0]".
func missingParent(err error, prefix string, jobs []skiplock.InsertManyParams) error {
	var me *skiplock.MissingDependencyError
	if !errors.As(err, &me) {
		return err
	}
	for i, j := range jobs {
		for k, id := range j.Opts.DependsOn {
			if id == me.ID {
				return badRequest(parentField(prefix, i, k), "no job %d", id)
			}
		}
	}
	return err
}

func parentField(prefix string, i, k int) string {
	field := fmt.Sprintf("depends_on[%d]", k)
	if prefix != "" {
		field = fmt.Sprintf("%s[%d].%s", prefix, i, field)
	}
	return field
}

// checkParents makes a scoped token's dependencies name only jobs of its
// tenant: another tenant's job is as missing as one that does not exist.
func (s *Server) checkParents(ctx context.Context, prefix string, p *principal, jobs []skiplock.InsertManyParams) error {
	if p == nil || !p.scoped {
		return nil
	}
	for i, j := range jobs {
		for k, id := range j.Opts.DependsOn {
			parent, err := s.client.JobGet(ctx, id)
			if errors.Is(err, skiplock.ErrNotFound) || (err == nil && !p.sees(parent.Tenant)) {
				return badRequest(parentField(prefix, i, k), "no job %d", id)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
