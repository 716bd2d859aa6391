package contract

import (
	"fmt"

	"github.com/goccy/go-yaml/token"
)

// checkYAMLShape bounds, from the tokens alone, how deeply a YAML document
// nests and how many keys one mapping holds, before the parser sees it:
// goccy/go-yaml's parser recurses once per level and once per key of a
// mapping, and copies the keys it has so far at every step, so its cost
// grows with the square of both.
//
// Flow collections ([ ], { }) count their brackets. Block collections
// count the columns of the keys and entries that are open on the way down.
// The estimate errs towards too deep, never towards too shallow, except by
// one level per indentless sequence.
func checkYAMLShape(tokens token.Tokens) error {
	var s yamlShape
	for i, tk := range tokens {
		s.step(tokens, i)
		if s.problem != "" {
			if tk.Type == token.MappingValueType && i > 0 {
				tk = tokens[i-1] // name the key, not its ':'
			}
			return &FileError{Path: fmt.Sprintf("line %d, column %d", tk.Position.Line, tk.Position.Column), Message: s.problem}
		}
	}
	return nil
}

type yamlShape struct {
	flow    []int        // keys so far in each open flow collection
	block   []blockLevel // open block collections, outermost first
	problem string
}

type blockLevel struct {
	col  int
	keys int
	seq  bool
}

func (s *yamlShape) step(tokens token.Tokens, i int) {
	tk := tokens[i]
	switch tk.Type {
	case token.SequenceStartType, token.MappingStartType:
		s.flow = append(s.flow, 0)
	case token.SequenceEndType, token.MappingEndType:
		if len(s.flow) > 0 {
			s.flow = s.flow[:len(s.flow)-1]
		}
	case token.DocumentHeaderType:
		s.flow, s.block = s.flow[:0], s.block[:0]
	case token.SequenceEntryType:
		if len(s.flow) == 0 {
			s.entry(tk.Position.Column)
		}
	case token.MappingKeyType, token.MappingValueType:
		switch {
		case len(s.flow) > 0:
			s.flow[len(s.flow)-1]++
			s.count(s.flow[len(s.flow)-1])
		case tk.Type == token.MappingKeyType:
			s.key(tk.Position.Column)
		case i > 0:
			// A block key is the token before its ':'.
			s.key(tokens[i-1].Position.Column)
		}
	}
	if len(s.flow)+len(s.block) > maxDepth {
		s.problem = fmt.Sprintf("nested deeper than %d levels", maxDepth)
	}
}

// key records a block mapping key at col: a sibling of the keys at col, a
// child of those left of it. It closes an indentless sequence at col.
func (s *yamlShape) key(col int) {
	for n := len(s.block); n > 0 && (s.block[n-1].col > col || s.block[n-1].col == col && s.block[n-1].seq); n-- {
		s.block = s.block[:n-1]
	}
	if n := len(s.block); n > 0 && s.block[n-1].col == col {
		s.block[n-1].keys++
		s.count(s.block[n-1].keys)
		return
	}
	s.block = append(s.block, blockLevel{col: col, keys: 1})
}

// entry records a block sequence entry at col.
func (s *yamlShape) entry(col int) {
	for n := len(s.block); n > 0 && s.block[n-1].col > col; n-- {
		s.block = s.block[:n-1]
	}
	if n := len(s.block); n > 0 && s.block[n-1].col == col && s.block[n-1].seq {
		return
	}
	s.block = append(s.block, blockLevel{col: col, seq: true})
}

func (s *yamlShape) count(keys int) {
	if keys > maxKeys {
		s.problem = fmt.Sprintf("more than %d keys in one mapping", maxKeys)
	}
}
