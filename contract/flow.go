package contract

import (
	"encoding/json"
	"strings"
	"time"
)

// FlowLimit is a kind's flow limit (docs/flow-control.md): at most Limit
// running jobs per key (concurrency), or at most Limit starts per Per per
// key (rate_limit). Key is a field reference (CheckFlowRef); empty, every
// job of the kind shares one key.
type FlowLimit struct {
	Limit int
	Per   time.Duration // rate_limit only
	Key   string
}

// HasFlow reports whether any kind of the set has a flow limit.
func (s *Set) HasFlow() bool { return s != nil && s.flow }

// CheckFlowRef answers what is wrong with the field reference of a flow
// key, or "": payload.<path>, tenant, queue, op or kind.
func CheckFlowRef(ref string) string {
	if ref == "kind" {
		return ""
	}
	if msg := checkRef(ref, true); msg != "" {
		return strings.Replace(msg, refSyntax, refSyntax+" or kind", 1)
	}
	return ""
}

// FieldValue reads the field reference ref of a job (CheckFlowRef). A
// string value stands as itself, any other as its compact JSON; a
// property missing from the payload is a validation error naming it.
func FieldValue(ref, kind, tenant, queue, op string, payload json.RawMessage) (string, error) {
	src := refSource{kind: kind, tenant: tenant, queue: queue, op: op}
	switch ref {
	case "kind":
		return kind, nil
	case "tenant", "queue", "op":
	default:
		obj, _, verr := decodePayload(payload)
		if verr != nil {
			return "", verr
		}
		src.payload = obj
	}
	v, ok := src.value(ref)
	if !ok {
		name := ref[strings.LastIndexByte(ref, '.')+1:]
		return "", invalid(ref, "missing property %q (a flow limit of kind %q takes its key from it)", name, kind)
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return compactJSON(v), nil
}

// flowLimit reads a kind's concurrency or rate_limit.
func (p *problems) flowLimit(v any, path string, rate bool) *FlowLimit {
	obj, ok := p.object(v, path)
	if !ok {
		return nil
	}
	f := &FlowLimit{}
	allowed := "limit, key"
	if rate {
		allowed = "limit, per, key"
	}
	for _, key := range obj.keys {
		v, at := obj.vals[key], join(path, key)
		switch {
		case key == "limit":
			f.Limit, _ = p.integer(v, at, 1, 1_000_000)
		case key == "per" && rate:
			f.Per, _ = p.positive(v, at)
		case key == "key":
			if s, ok := p.str(v, at); ok {
				if msg := CheckFlowRef(s); msg != "" {
					p.add(at, "%s", msg)
				}
				f.Key = s
			}
		default:
			p.add(at, "unknown field (allowed: %s)", allowed)
		}
	}
	if _, given := obj.get("limit"); !given {
		p.add(join(path, "limit"), "required: a positive integer")
	}
	if _, given := obj.get("per"); rate && !given {
		p.add(join(path, "per"), "required: a positive duration such as 1s or 1m")
	}
	return f
}

// FlowLimitInfo is a kind's flow limit in KindInfo; Per is a Go duration
// ("1s") for a rate limit and "" for a concurrency limit.
type FlowLimitInfo struct {
	Limit int    `json:"limit"`
	Per   string `json:"per,omitempty"`
	Key   string `json:"key,omitempty"`
}

func (f *FlowLimit) info() *FlowLimitInfo {
	if f == nil {
		return nil
	}
	info := &FlowLimitInfo{Limit: f.Limit, Key: f.Key}
	if f.Per > 0 {
		info.Per = shortDuration(f.Per)
	}
	return info
}
