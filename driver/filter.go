package driver

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Filter is the condition every job listing (ListParams) and bulk
// selection (SelectParams) of a driver reads: each driver writes it once
// (the JobFilter fragment of its statements), with these fields as
// parameters of the same names in both drivers. Empty fields match every
// job; a list matches any of its values.
type Filter struct {
	States         []JobState
	Kinds, Queues  []string
	Tenant         *string
	IDs            []int64
	WorkflowID     string
	Tags           []string
	Metadata       map[string]any
	Payload        map[string]any
	WorkerID       string
	ErrorType      string
	ErrorMessage   string
	IdempotencyKey string
	CreatedAfter   time.Time
	CreatedBefore  time.Time
	FinishedAfter  time.Time
	FinishedBefore time.Time
}

// Filter answers the listing's filter.
func (p *ListParams) Filter() Filter {
	f := Filter{States: p.States, Tenant: p.Tenant, WorkflowID: p.WorkflowID, Tags: p.Tags,
		Metadata: p.Metadata, Payload: p.Payload, WorkerID: p.WorkerID, ErrorType: p.ErrorType,
		ErrorMessage: p.ErrorMessage, IdempotencyKey: p.IdempotencyKey,
		CreatedAfter: p.CreatedAfter, CreatedBefore: p.CreatedBefore,
		FinishedAfter: p.FinishedAfter, FinishedBefore: p.FinishedBefore}
	if p.Kind != "" {
		f.Kinds = []string{p.Kind}
	}
	if p.Queue != "" {
		f.Queues = []string{p.Queue}
	}
	return f
}

// Filter answers the selection's filter: Before bounds a live job's
// creation or an archived job's finish.
func (p *SelectParams) Filter() Filter {
	f := Filter{States: p.States, Kinds: p.Kinds, Queues: p.Queues, Tenant: p.Tenant, IDs: p.IDs,
		Metadata: p.Metadata, Payload: p.Payload, ErrorType: p.ErrorType, ErrorMessage: p.ErrorMessage}
	if p.Archived {
		f.FinishedBefore = p.Before
	} else {
		f.CreatedBefore = p.Before
	}
	return f
}

// StateNames answers the states as text, for a statement's parameter.
func (f *Filter) StateNames() []string { return stateNames(f.States) }

// stateNames answers states as text, never nil.
func stateNames(states []JobState) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}

// Contains answers the Metadata and Payload filters as JSON objects that a
// matching job's metadata and payload contain (PostgreSQL's @>): a payload
// key a.b is the key b of the object under a. Nil for an empty filter.
func (f *Filter) Contains() (metadata, payload []byte, err error) {
	if len(f.Metadata) > 0 {
		if metadata, err = json.Marshal(f.Metadata); err != nil {
			return nil, nil, fmt.Errorf("metadata filter: %w", err)
		}
	}
	if len(f.Payload) == 0 {
		return metadata, nil, nil
	}
	nested := map[string]any{}
	for k, v := range f.Payload {
		at, parts := nested, strings.Split(k, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := at[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				at[p] = next
			}
			at = next
		}
		at[parts[len(parts)-1]] = v
	}
	if payload, err = json.Marshal(nested); err != nil {
		return nil, nil, fmt.Errorf("payload filter: %w", err)
	}
	return metadata, payload, nil
}

// Paths answers the Metadata and Payload filters as JSON objects from a
// JSON path ($."key", $."a"."b" for the payload key a.b) to the value
// there (SQLite's json_extract). Nil for an empty filter.
func (f *Filter) Paths() (metadata, payload []byte, err error) {
	paths := func(m map[string]any, nest bool) ([]byte, error) {
		if len(m) == 0 {
			return nil, nil
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			parts := []string{k}
			if nest {
				parts = strings.Split(k, ".")
			}
			out[`$."`+strings.Join(parts, `"."`)+`"`] = v
		}
		return json.Marshal(out)
	}
	if metadata, err = paths(f.Metadata, false); err != nil {
		return nil, nil, fmt.Errorf("metadata filter: %w", err)
	}
	if payload, err = paths(f.Payload, true); err != nil {
		return nil, nil, fmt.Errorf("payload filter: %w", err)
	}
	return metadata, payload, nil
}
