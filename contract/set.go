package contract

import (
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Built-in defaults, used where neither the job, its kind nor the file's
// defaults give a value.
const (
	DefaultQueue      = "default"
	DefaultPriority   = 5
	DefaultMaxRetries = 3
	DefaultLease      = 5 * time.Minute
	MinPriority       = 0
	MaxPriority       = 10
)

// Uniqueness policies.
const (
	// PolicyActive allows one live job (not completed, failed or cancelled)
	// per idempotency key.
	PolicyActive = "active"
	// PolicyWindow allows one job per key created within the window,
	// finished or not.
	PolicyWindow = "window"
)

// Set is a loaded contract file. It is immutable and safe for concurrent
// use. A nil *Set means "no contracts" (see Apply).
type Set struct {
	// Strict rejects kinds the file does not declare.
	Strict bool

	defaults settings
	kinds    map[string]*Kind
	// source is the document the set was parsed from.
	source []byte
}

// Kind is one kind's contract, already merged with the file's defaults.
type Kind struct {
	Name       string
	Queue      string
	Priority   int
	MaxRetries int
	Lease      time.Duration
	Timeout    time.Duration // 0: none
	Backoff    Backoff
	Ops        []string // empty: jobs of this kind carry no op
	Unique     *Unique  // nil: no derived idempotency key
	// SQLEnqueue lets skiplock_enqueue (PostgreSQL) store jobs of a kind
	// with a payload schema, which SQL does not check.
	SQLEnqueue bool

	schema *jsonschema.Schema // nil: any JSON object
}

// Unique is how a kind derives idempotency keys and how long they hold.
type Unique struct {
	Policy string        // PolicyActive or PolicyWindow
	Window time.Duration // PolicyWindow only
	Scope  []string      // references whose values form {scope}
	Fields []string      // references whose values are hashed
}

// settings are the values that defaults and kinds share.
type settings struct {
	queue      string
	priority   int
	maxRetries int
	lease      time.Duration
	timeout    time.Duration
	backoff    Backoff
}

func builtinSettings() settings {
	return settings{
		queue:      DefaultQueue,
		priority:   DefaultPriority,
		maxRetries: DefaultMaxRetries,
		lease:      DefaultLease,
		backoff:    DefaultBackoff,
	}
}

// Kind returns the contract of the named kind (case-sensitive). The result
// is a copy; changing it does not change the Set.
func (s *Set) Kind(name string) (*Kind, bool) {
	if s == nil {
		return nil, false
	}
	k, ok := s.kinds[name]
	if !ok {
		return nil, false
	}
	c := *k
	c.Ops = slices.Clone(k.Ops)
	if k.Unique != nil {
		u := *k.Unique
		u.Scope, u.Fields = slices.Clone(u.Scope), slices.Clone(u.Fields)
		c.Unique = &u
	}
	return &c, true
}

// HasSchema reports whether the kind checks its payload against a JSON
// Schema.
func (k *Kind) HasSchema() bool { return k.schema != nil }

// Defaults answers the settings of kinds the set does not declare (queue,
// priority, max_retries), the built-in ones for a nil set.
func (s *Set) Defaults() KindInfo {
	st := s.settings()
	return KindInfo{Queue: st.queue, Priority: st.priority, MaxRetries: st.maxRetries, Ops: []string{}}
}

// KindInfo describes a kind for GET /v1/kinds.
type KindInfo struct {
	Kind       string      `json:"kind"`
	Queue      string      `json:"queue"`
	Priority   int         `json:"priority"`
	MaxRetries int         `json:"max_retries"`
	Ops        []string    `json:"ops"`
	Unique     *UniqueInfo `json:"unique"`
}

// UniqueInfo is a kind's uniqueness in KindInfo. Window is a Go duration
// ("24h") for PolicyWindow and "" otherwise.
type UniqueInfo struct {
	Policy string   `json:"policy"`
	Window string   `json:"window"`
	Scope  []string `json:"scope"`
	Fields []string `json:"fields"`
}

// Kinds lists the declared kinds sorted by name. Lists are never nil, so
// that they encode as [] rather than null.
func (s *Set) Kinds() []KindInfo {
	if s == nil {
		return []KindInfo{}
	}
	names := make([]string, 0, len(s.kinds))
	for name := range s.kinds {
		names = append(names, name)
	}
	slices.Sort(names)
	infos := make([]KindInfo, 0, len(names))
	for _, name := range names {
		k := s.kinds[name]
		info := KindInfo{
			Kind:       k.Name,
			Queue:      k.Queue,
			Priority:   k.Priority,
			MaxRetries: k.MaxRetries,
			Ops:        append([]string{}, k.Ops...),
		}
		if u := k.Unique; u != nil {
			info.Unique = &UniqueInfo{
				Policy: u.Policy,
				Scope:  append([]string{}, u.Scope...),
				Fields: append([]string{}, u.Fields...),
			}
			if u.Policy == PolicyWindow {
				info.Unique.Window = shortDuration(u.Window)
			}
		}
		infos = append(infos, info)
	}
	return infos
}

// shortDuration prints 24h rather than time.Duration's 24h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
