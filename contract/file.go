package contract

import (
	"errors"
	"slices"
	"strings"
)

// build checks a decoded contract file and turns it into a Set. Keys are
// read in file order, so that problems are reported in the order a reader
// meets them.
func build(tree any) (*Set, error) {
	p := &problems{}
	root, ok := p.object(tree, docPath)
	if !ok {
		return nil, errors.Join(p.errs...)
	}
	set := &Set{defaults: builtinSettings(), kinds: map[string]*Kind{}}
	// defaults apply to every kind, so they are read before any kind
	// whatever their place in the file.
	if v, given := root.get("defaults"); given {
		set.defaults = p.defaults(v)
	}
	version := false
	for _, key := range root.keys {
		v := root.vals[key]
		switch key {
		case "version":
			version = true
			p.version(v)
		case "strict":
			set.Strict, _ = p.boolean(v, key)
		case "defaults":
		case "kinds":
			p.kinds(v, set)
		default:
			if strings.HasPrefix(key, "x-") {
				// Extension keys hold YAML anchors that kinds share.
				continue
			}
			p.add(join("", key), "unknown field (allowed: version, strict, defaults, kinds, x-...)")
		}
	}
	if !version {
		p.add("version", "required: this format is version 1")
	}
	if set.Strict && len(set.kinds) == 0 && len(p.errs) == 0 {
		p.add("kinds", "strict mode needs at least one kind; every job would be rejected")
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return set, nil
}

func (p *problems) version(v any) {
	n, ok := p.number(v, "version")
	if ok && n != 1 {
		p.add("version", "unsupported version %v (this format is version 1)", v)
	}
}

func (p *problems) defaults(v any) settings {
	s := builtinSettings()
	obj, ok := p.object(v, "defaults")
	if !ok {
		return s
	}
	for _, key := range obj.keys {
		if !p.setting(&s, key, obj.vals[key], join("defaults", key)) {
			p.add(join("defaults", key), "unknown field (allowed: queue, priority, max_retries, lease, timeout, backoff)")
		}
	}
	return s
}

func (p *problems) kinds(v any, set *Set) {
	obj, ok := p.object(v, "kinds")
	if !ok {
		return
	}
	for _, name := range obj.keys {
		path := join("kinds", name)
		if !validName(name) {
			p.add(path, "invalid kind name %q: use 1 to %d letters, digits, '_', '.' or '-'", name, maxNameLen)
			continue
		}
		if k := p.kind(name, obj.vals[name], path, set.defaults); k != nil {
			set.kinds[name] = k
		}
	}
}

// kind reads one kind. Its settings start from the file's defaults.
func (p *problems) kind(name string, v any, path string, defaults settings) *Kind {
	obj, ok := p.object(v, path)
	if !ok {
		return nil
	}
	s := defaults
	k := &Kind{Name: name}
	for _, key := range obj.keys {
		v, at := obj.vals[key], join(path, key)
		if p.setting(&s, key, v, at) {
			continue
		}
		switch key {
		case "ops":
			k.Ops = p.ops(v, at)
		case "payload":
			k.schema = p.compileSchema(name, v, at)
		case "unique":
		case "sql_enqueue":
			k.SQLEnqueue, _ = p.boolean(v, at)
		default:
			p.add(at, "unknown field (allowed: queue, priority, max_retries, lease, timeout, backoff, ops, payload, unique, sql_enqueue)")
		}
	}
	// unique is read last: whether it may reference op depends on ops.
	if v, given := obj.get("unique"); given {
		k.Unique = p.unique(v, join(path, "unique"), len(k.Ops) > 0)
	}
	k.Queue, k.Priority, k.MaxRetries = s.queue, s.priority, s.maxRetries
	k.Lease, k.Timeout, k.Backoff = s.lease, s.timeout, s.backoff
	return k
}

func (p *problems) ops(v any, path string) []string {
	list, ok := p.list(v, path)
	if !ok {
		return nil
	}
	if len(list) == 0 {
		p.add(path, "must list at least one op (leave ops out for a kind whose jobs carry none)")
		return nil
	}
	var ops []string
	for i, item := range list {
		op, ok := p.name(item, index(path, i))
		if !ok {
			continue
		}
		if slices.Contains(ops, op) {
			p.add(index(path, i), "duplicate op %q", op)
			continue
		}
		ops = append(ops, op)
	}
	return ops
}

func (p *problems) unique(v any, path string, hasOps bool) *Unique {
	obj, ok := p.object(v, path)
	if !ok {
		return nil
	}
	u := &Unique{}
	for _, key := range obj.keys {
		v, at := obj.vals[key], join(path, key)
		switch key {
		case "policy":
			if s, ok := p.str(v, at); ok && s != PolicyActive && s != PolicyWindow {
				p.add(at, "must be active or window, got %q", s)
			} else {
				u.Policy = s
			}
		case "window":
			u.Window, _ = p.positive(v, at)
		case "scope":
			u.Scope = p.refs(v, at, hasOps, false)
		case "fields":
			u.Fields = p.refs(v, at, hasOps, true)
		default:
			p.add(at, "unknown field (allowed: policy, window, scope, fields)")
		}
	}
	p.uniqueRules(obj, u, path)
	return u
}

// uniqueRules checks what unique needs as a whole: a policy, fields, and a
// window exactly when the policy is window.
func (p *problems) uniqueRules(obj *object, u *Unique, path string) {
	_, window := obj.get("window")
	if _, given := obj.get("policy"); !given {
		p.add(join(path, "policy"), "required: active or window")
	}
	if _, given := obj.get("fields"); !given {
		p.add(join(path, "fields"), "required: the references whose values identify a job")
	}
	switch {
	case u.Policy == PolicyWindow && !window:
		p.add(join(path, "window"), "required for policy window")
	case u.Policy == PolicyActive && window:
		p.add(join(path, "window"), "only used with policy window")
	}
}

// refs reads a list of field references (see checkRef).
func (p *problems) refs(v any, path string, hasOps, nonEmpty bool) []string {
	list, ok := p.list(v, path)
	if !ok {
		return nil
	}
	if nonEmpty && len(list) == 0 {
		p.add(path, "must list at least one field")
		return nil
	}
	var refs []string
	for i, item := range list {
		ref, ok := p.str(item, index(path, i))
		if !ok {
			continue
		}
		if msg := checkRef(ref, hasOps); msg != "" {
			p.add(index(path, i), "%s", msg)
			continue
		}
		if slices.Contains(refs, ref) {
			p.add(index(path, i), "duplicate reference %q", ref)
			continue
		}
		refs = append(refs, ref)
	}
	return refs
}
